package zktest_test

import (
	"os"
	"testing"

	"github.com/zk19/zk19/internal/server/zkserver"
)

func TestMain(m *testing.M) {
	os.Exit(zkserver.RunExamples(m, "zktest", func(*zkserver.Scope) {}))
}

// example returns a TB for one Example and the func that ends it: an
// Example has no *testing.T, and in a test you pass t instead.
func example(name string) (zkt *zkserver.Scope, done func()) {
	sc := zkserver.NewScope(name)
	return sc, sc.Close
}
