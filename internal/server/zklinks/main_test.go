package zklinks

import (
	"os"
	"testing"

	"github.com/zk19/zk19/internal/server/zkserver"
)

func TestMain(m *testing.M) { os.Exit(zkserver.RunTests(m)) }
