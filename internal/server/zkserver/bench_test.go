package zkserver_test

import (
	"testing"

	"github.com/zk19/zk19/internal/server/zkserver"
)

func BenchmarkStartStandalone(b *testing.B) {
	zkserver.BenchReady(b, func(t zkserver.TB) { zkserver.Start(t) })
}

func BenchmarkStartEnsemble3(b *testing.B) {
	zkserver.BenchReady(b, func(t zkserver.TB) { zkserver.StartEnsemble(t, 3) })
}
