package harness

import (
	"errors"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"time"

	"github.com/zk19/zk19/internal/server/zkserver"
)

// Natural expiry needs a short session: with tickTime 100 ms the server
// accepts sessions of 200 ms to 2 s. The claims that use these are about
// what happens when a session runs out.
const (
	ExpiryTick           = 100 * time.Millisecond
	ExpirySessionTimeout = time.Second
)

// ExpiryServer lends the test a server of its own (from the pool, see
// pool.go) whose sessions can run out within seconds (expiryTick).
// A session runs out when a client proxy cuts its client off, which works
// in front of any server: on the external
// Backend it is the user's server, whose tickTime the harness cannot set,
// and the claim skips unless a session expires there within the bound the
// claims wait for expiry.
func ExpiryServer(t zkserver.TB) *zkserver.Server {
	t.Helper()
	s := LeaseServer(t, expiryKind)
	if why := ExpiryDoesNotFit(s); why.En != "" {
		claims.Skip(t, "skipped: %s", why)
	}
	return s
}

// ExpiryWithin is how long the expiry claims wait for a silent session to
// run out: 10 × expirySessionTimeout.
const ExpiryWithin = 10 * ExpirySessionTimeout

// ExpiryDoesNotFit says why a silent session of expirySessionTimeout may
// outlive ExpiryWithin on s, or nothing ("") if it cannot.
func ExpiryDoesNotFit(s *zkserver.Server) zh.Text {
	d, err := s.SessionExpiry(ExpirySessionTimeout)
	var na *zkserver.NotAllowedError
	switch {
	case errors.As(err, &na):
		return zh.Say("the claim reads the server's conf to know when a session expires; %v", na)
	case err != nil:
		return zh.Say("conf of %s: %v", s.Label, err)
	case d > ExpiryWithin:
		return zh.Say("a session asking for %v lives up to %v on %s (the granted timeout, within minSessionTimeout and maxSessionTimeout, plus one tickTime); the claim waits %v for it to expire: lower tickTime or minSessionTimeout", ExpirySessionTimeout, d, s.Client, ExpiryWithin)
	}
	return zh.Text{}
}
