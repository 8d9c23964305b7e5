package bench_test

import (
	"testing"

	"github.com/zk19/zk19/internal/proof/harness"
)

// TestMain starts servers only when a benchmark runs (go test -bench):
// go test ./... passes through this package without starting anything.
func TestMain(m *testing.M) { harness.BenchMain(m) }
