package peers_test

import (
	"testing"

	"github.com/zk19/zk19/internal/proof/harness"
)

// TestMain runs the peer table on the backend the root's claims use, with
// the same cleanup, reaper and shared server, and no record header: these
// tests prove no claim of the article.
func TestMain(m *testing.M) { harness.KitMain(m) }
