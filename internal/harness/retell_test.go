package harness_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/zk19/zk19/internal/harness"
	"github.com/zk19/zk19/internal/zkserver"
)

// told counts the runs of toldScene.
var told atomic.Int32

// Example_told is told once for the Tests that retell it and for itself.
func Example_told() {
	harness.Tell(toldScene)
	// Output:
	// the scene printed this
}

func toldScene(sc *zkserver.Scope) {
	n := told.Add(1)
	sc.Logf("a step of telling %d", n)
	sc.Attr("zk19.test", fmt.Sprint(n))
	sc.Println("the scene printed this")
}

// TestRetellTellsTheSceneOnceForAllItsTakers: two Tests that retell an
// Example share one telling, which the first ran (or an earlier run of go
// test -count=N left untaken); the second runs nothing. A Test that
// retells it twice takes a second telling.
func TestRetellTellsTheSceneOnceForAllItsTakers(t *testing.T) {
	var first, second *harness.Telling
	t.Run("first", func(t *testing.T) { first = harness.Retell(t, Example_told) })
	before := told.Load()
	t.Run("second", func(t *testing.T) { second = harness.Retell(t, Example_told) })
	if got := told.Load() - before; got != 0 || first != second {
		t.Errorf("got %d runs of the scene for the second taker, the first's telling: %v; want none and the same telling", got, first == second)
	}
	t.Run("again", func(t *testing.T) {
		again := harness.Retell(t, Example_told)
		if twice := harness.Retell(t, Example_told); twice == again {
			t.Errorf("got the same telling for a Test that retold it twice; want a telling of its own")
		}
	})
}

// TestRetoldRecordIsTheTakersOwn: a Test that retells an Example gets the
// telling's record as its own, in go test's -v output: the scene's lines
// and, as attributes of the Test, what the scene stated (t.Attr). The
// evidence reads a retelling Test's verdicts from those attributes, so a
// replay that kept the lines and the printed output but dropped them
// would leave the Test with no observation. The Test runs in a child
// binary, whose output this one reads.
func TestRetoldRecordIsTheTakersOwn(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestRetellingTaker$", "-test.v", "-test.count=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child: %v", err)
	if err != nil {
		t.Fatalf("child test binary: got %v; want it to pass:\n%s", err, out)
	}
	for _, want := range []string{"=== ATTR  TestRetellingTaker zk19.test 1", "a step of telling 1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the retelling Test's record: got\n%s\nwant a line with %q", out, want)
		}
	}
}

// TestRetellingTaker retells Example_told: TestRetoldRecordIsTheTakersOwn
// reads its record from a child binary.
func TestRetellingTaker(t *testing.T) { harness.Retell(t, Example_told) }
