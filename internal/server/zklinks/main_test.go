package zklinks

import (
	"os"
	"testing"

	"github.com/zk19/zk19/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(servertest.RunTests(m)) }
