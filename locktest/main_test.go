package locktest_test

import (
	"testing"

	"github.com/zk19/zk19/locktest"
)

// TestMain starts the server the scenarios share, as a recipe author's
// TestMain does.
func TestMain(m *testing.M) { locktest.Main(m) }
