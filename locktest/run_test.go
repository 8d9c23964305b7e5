package locktest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/zk19/zk19/locktest"
)

// envRunChild makes TestRunFailsABrokenPromise the child that runs Run on
// careless and fails.
const envRunChild = "ZK19_LOCKTEST_RUN_CHILD"

// TestRunFailsABrokenPromise: Run passes where Expect names the verdict
// careless earns (cancel: broke), and, in a child test binary, fails the
// subtest of a broken promise that nothing expects ("got broke: …; want
// kept") and of an expectation the recipe no longer meets ("want broke
// (Expect)").
func TestRunFailsABrokenPromise(t *testing.T) {
	if os.Getenv(envRunChild) != "" {
		locktest.Run(t, "careless", careless{}, locktest.Only("cancel", "suffix-order"),
			locktest.Expect("suffix-order", locktest.Broken))
		return
	}
	locktest.Run(t, "careless", careless{}, locktest.Only("cancel"), locktest.Expect("cancel", locktest.Broken))
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunFailsABrokenPromise$", "-test.count=1")
	cmd.Env = append(os.Environ(), envRunChild+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child's Run: got a pass; want it failed\n%s", out)
	}
	for _, want := range []string{
		"scenario cancel: got broke: cancelled (context.Canceled) but left its node; want kept",
		"scenario suffix-order: got kept: waited behind the older node, held once it went; want broke (Expect)",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child's output: got no line %q; want it\n%s", want, out)
		}
	}
}
