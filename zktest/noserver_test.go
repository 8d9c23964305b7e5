package zktest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNoServerSkipsOrFailsUnderCI: where no server can be had (the external
// backend named with no server), Start skips the test and says why; under
// CI=true it fails it. The test binary runs itself, with -short so that its
// TestMain lets the tests run without a server.
func TestNoServerSkipsOrFailsUnderCI(t *testing.T) {
	for _, c := range []struct{ ci, want string }{{"", "--- SKIP: TestStartConnect"}, {"true", "--- FAIL: TestStartConnect"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStartConnect$", "-test.short", "-test.v")
		cmd.Env = append(os.Environ(), "ZK19_BACKEND=external", "ZK19_SERVERS=", "CI="+c.ci)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "zktest: no ZooKeeper server: ZK19_BACKEND=external needs ZK19_SERVERS") {
			t.Errorf("CI=%q: got\n%s\nwant %q with the reason", c.ci, out, c.want)
		}
	}
}
