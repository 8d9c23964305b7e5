package zkserver

import "github.com/zk19/zk19/internal/server/faultproxy"

// ClientProxy puts a ZooKeeper-aware fault proxy between one client and
// server s: every zk19 client reaches its server through a proxy of its
// own, so a fault can be aimed at one client. The proxy's decisions are
// logged as "nemesis" lines, the record's word for a fault; it is closed
// at cleanup.
func ClientProxy(t TB, name string, s *Server) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(s.Client, faultproxy.WithName(name), faultproxy.WithZooKeeperFrames(),
		faultproxy.WithLogf(func(format string, args ...any) { t.Logf("nemesis "+format, args...) }))
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}
