package zkclient

import (
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zk19/zk19/internal/server/zkserver"
)

func TestMain(m *testing.M) { os.Exit(zkserver.RunTests(m)) }

// TestWaitConnectedMeansASessionNow: after the session was seen and then
// lost, WaitState(HasSession) still returns at once, WaitConnected does not
// until the client has a session again.
func TestWaitConnectedMeansASessionNow(t *testing.T) {
	zkserver.RequireFaults(t)
	s := zkserver.Start(t, zkserver.WithTickTime(100*time.Millisecond))
	c := Connect(t, "A", []string{s.Client}, WithSessionTimeout(2*time.Second))
	if err := c.WaitConnected(time.Second); err != nil {
		t.Fatalf("right after Connect: got %v; want a session now", err)
	}
	mark := c.Mark()
	s.Pause(t)
	if err := c.WaitStateSince(mark, zk.StateDisconnected, 10*time.Second); err != nil {
		s.Resume(t)
		t.Fatalf("server paused: %v", err)
	}
	if err := c.WaitState(zk.StateHasSession, 0); err != nil {
		t.Errorf("WaitState(HasSession) while disconnected: got %v; want nil (the session was seen earlier)", err)
	}
	if err := c.WaitConnected(200 * time.Millisecond); err == nil {
		t.Errorf("WaitConnected while the server is paused: got nil; want an error (states %v)", c.States())
	}
	s.Resume(t)
	if err := c.WaitConnected(10 * time.Second); err != nil {
		t.Fatalf("server resumed: got %v; want a session again", err)
	}
}

// heldConn, once held, keeps what the server sends (the reply to the close
// request among it) from the library until release is closed: the
// library's receive loop, and with it the event stream, cannot end before.
type heldConn struct {
	net.Conn
	held    *atomic.Bool
	release chan struct{}
}

func (h heldConn) Read(b []byte) (int, error) {
	n, err := h.Conn.Read(b)
	if h.held.Load() {
		<-h.release
	}
	return n, err
}

// TestCloseWaitEndsTheClientsGoroutines: CloseWait returns only once the
// library's connection loop has ended (it closes the event stream last),
// and a second CloseWait (the cleanup's) is harmless.
func TestCloseWaitEndsTheClientsGoroutines(t *testing.T) {
	s := zkserver.Start(t, zkserver.WithTickTime(100*time.Millisecond), zkserver.AllowExternal())
	keep := goleak.IgnoreCurrent()
	held, release := new(atomic.Bool), make(chan struct{})
	dial := func(network, address string, timeout time.Duration) (net.Conn, error) {
		conn, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return heldConn{conn, held, release}, nil
	}
	c, err := TryConnect(t, "A", []string{s.Client}, Quiet(), WithDialer(dial))
	if err != nil {
		t.Fatalf("TryConnect: %v", err)
	}
	held.Store(true)
	if err := c.CloseWait(200 * time.Millisecond); err == nil {
		t.Errorf("CloseWait while the library's receive loop is held: got nil; want an error (its loop still runs)")
	}
	close(release)
	if err := c.CloseWait(5 * time.Second); err != nil {
		t.Fatalf("CloseWait once released: %v", err)
	}
	select {
	case <-c.drained:
	default:
		t.Fatalf("CloseWait returned nil; the event stream is still open (the library's loop still runs)")
	}
	if err := goleak.Find(append(zkserver.LeakOptions(), keep)...); err != nil {
		t.Errorf("after CloseWait: %v", err)
	}
}

// TestTryConnectReturnsTheError: no Fatalf, so it is safe off the test's
// goroutine.
func TestTryConnectReturnsTheError(t *testing.T) {
	if _, err := TryConnect(t, "A", []string{"not an address"}, Quiet()); err == nil {
		t.Fatal("TryConnect to a malformed address: got nil; want an error")
	}
}
