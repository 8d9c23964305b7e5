package replicas

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/history"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// Trio is a 3-server ensemble with a proxy on every server-to-server link.
// A is connected to one follower (fresh); B to the other (lagging, once its
// leader stream is held).
type Trio struct {
	t zkserver.TB
	*harness.Cluster
	LeaderServer, fresh, Lagging *zkserver.Server
	A, B                         *XClient
	History                      *XHistory
}

const (
	XPath       = "/x"
	BarrierPath = "/barrier"
)

func NewTrio(t zkserver.TB, opts ...zkserver.Option) *Trio {
	t.Helper()
	var c *harness.Cluster
	if len(opts) == 0 {
		c = harness.LeaseTrio(t)
	} else {
		c = harness.StartCluster(t, 3, append([]zkserver.Option{zkserver.WithTickTime(harness.TrioKind.Tick()), zkserver.WithLimits(10, harness.TrioKind.SyncLimit())}, opts...)...)
	}
	fs := c.Followers()
	if len(fs) != 2 {
		t.Fatalf("got %d followers; want 2", len(fs))
	}
	tr := &Trio{t: t, Cluster: c, LeaderServer: c.Leader(), fresh: fs[0], Lagging: fs[1], History: newXHistory("0")}
	tr.A = tr.History.Join(t, "A", 1, tr.fresh)
	tr.B = tr.History.Join(t, "B", 2, tr.Lagging)
	t.Logf("A is connected to %s; B to %s (the lagging one once held)", tr.fresh.Label, tr.Lagging.Label)
	if _, err := tr.A.Create(XPath, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", XPath, err)
	}
	// /barrier is the node B's write barriers update (Y3, Y5, Y6).
	if _, err := tr.A.Create(BarrierPath, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", BarrierPath, err)
	}
	// B's follower has /x = "0" before any fault: sync, then read.
	if _, err := tr.B.Conn.Sync(XPath); err != nil {
		t.Fatalf("B sync: %v", err)
	}
	if v := tr.B.Get(); v != "0" {
		t.Fatalf("setup: B read %q; want \"0\"", v)
	}
	return tr
}

// In returns the trio with t as the test that logs and fails (for subtests).
func (tr *Trio) In(t zkserver.TB) *Trio {
	c := *tr
	c.t, c.A, c.B = t, tr.A.in(t), tr.B.in(t)
	return &c
}

// LagBehind holds the leader's stream to B's follower and lets A write v:
// the write commits without B's follower.
func (tr *Trio) LagBehind(v string) {
	tr.t.Helper()
	tr.HoldLeaderStream()
	tr.A.Set(v)
}

// CatchUp releases the stream and waits until B reads v.
func (tr *Trio) CatchUp(v string) {
	tr.t.Helper()
	tr.Release()
	tb.WaitFor(tr.t, harness.Within, "B's follower to apply x="+v, func() (bool, string) {
		b, _, err := tr.B.Conn.Get(XPath)
		return err == nil && string(b) == v, fmt.Sprintf("%q %v", b, err)
	})
}

// XHistory is the history of the register /x that a scenario's
// participants record into, for porcupine.
type XHistory struct{ Rec *history.Recorder }

func newXHistory(initial string) *XHistory { return &XHistory{Rec: history.NewRecorder(initial)} }

// Start begins a new history, of a register whose value is now initial.
func (h *XHistory) Start(initial string) { h.Rec = history.NewRecorder(initial) }

// Verdict is porcupine's verdict on the history so far, as an
// observation of claim id (VerdictOf).
func (h *XHistory) Verdict(t zkserver.TB, id string) history.Verdict {
	t.Helper()
	return VerdictOf(t, id, h.Rec)
}

// Join connects participant name, porcupine's client id, to server s.
func (h *XHistory) Join(t zkserver.TB, name string, id int, s *zkserver.Server) *XClient {
	t.Helper()
	return h.Client(t, name, id, zkclient.Connect(t, name, []string{s.Client}))
}

// Client makes session c participant name, porcupine's client id.
func (h *XHistory) Client(t zkserver.TB, name string, id int, c *zkclient.Client) *XClient {
	return &XClient{Client: c, Log: claims.NewActor(t, name), id: id, h: h, inbox: make(chan string, 16)}
}

// XClient is a participant of the register scenarios: a named session
// whose calls on /x are logged as its actor's lines (Jepsen style) and
// recorded in the scenario's history. Set, Get and Sync shadow the
// connection's own; the raw calls stay at c.Conn.
type XClient struct {
	*zkclient.Client
	Log   claims.Actor
	id    int // porcupine's client id
	h     *XHistory
	inbox chan string   // what others told c out of band
	read  *history.Call // a composite read that Sync began and Get ends
}

// in returns c logging and failing as t (for subtests).
func (c *XClient) in(t zkserver.TB) *XClient {
	d := *c
	d.Log = claims.NewActor(t, c.Name)
	return &d
}

// Set writes v to /x and returns the node's data version after the write.
func (c *XClient) Set(v string) int32 {
	c.Log.TB.Helper()
	c.Log.Invoke("set %s %q", XPath, v)
	call := c.h.Rec.Invoke(c.id, history.Write, v)
	st, err := c.Conn.Set(XPath, []byte(v), -1)
	if err != nil {
		call.Info()
		c.Log.Info("set: %v (outcome unknown)", err)
		c.Log.TB.Fatalf("%s: set %s: %v", c.Name, XPath, err)
	}
	call.Ok(v)
	c.Log.Ok("version %d", st.Version)
	return st.Version
}

// Get reads /x on c's server. After a Sync the read is recorded from the
// sync's call: sync-then-read is one composite read.
func (c *XClient) Get() string {
	c.Log.TB.Helper()
	c.Log.Invoke("get %s", XPath)
	call := c.read
	c.read = nil
	if call == nil {
		call = c.h.Rec.Invoke(c.id, history.Read, "")
	}
	b, _, err := c.Conn.Get(XPath)
	if err != nil {
		call.Info()
		c.Log.Fail("get: %v", err)
		c.Log.TB.Fatalf("%s: get %s: %v", c.Name, XPath, err)
	}
	call.Ok(string(b))
	c.Log.Ok("%q", b)
	return string(b)
}

// Sync asks c's server to catch up with its leader on /x, and begins the
// composite read that the next Get ends.
func (c *XClient) Sync() error {
	c.Log.TB.Helper()
	c.Log.Invoke("sync %s", XPath)
	c.read = c.h.Rec.Invoke(c.id, history.Read, "")
	if _, err := c.Conn.Sync(XPath); err != nil {
		c.read.Info()
		c.read = nil
		c.Log.Fail("sync: %v", err)
		return err
	}
	c.Log.Ok("sync")
	return nil
}

// Tell sends msg to another participant out of band: through a channel,
// not through ZooKeeper.
func (c *XClient) Tell(to *XClient, msg string) {
	c.Log.TB.Helper()
	c.Log.Invoke("tell %s %q (out of band)", to.Name, msg)
	to.inbox <- msg
	c.Log.Ok("")
}

// Told returns the next message another participant told c.
func (c *XClient) Told() string {
	c.Log.TB.Helper()
	msg := tb.Receive(c.Log.TB, harness.Within, c.Name+"'s message", c.inbox)
	c.Log.Info("told %q", msg)
	return msg
}

// QuorumLink is the proxy B's follower dials to reach the leader.
func (tr *Trio) QuorumLink() *faultproxy.Proxy { return tr.StreamProxy(tr.Lagging) }

// HoldLeaderStream makes B's follower lag: everything the leader sends it is
// kept by the proxy (the cluster heals at cleanup). It returns that proxy,
// whose held bytes show the lag.
func (tr *Trio) HoldLeaderStream() *faultproxy.Proxy {
	tr.t.Helper()
	tr.HoldStream(tr.Lagging)
	return tr.QuorumLink()
}

func (tr *Trio) Release() { tr.t.Helper(); tr.ReleaseStream(tr.Lagging) }

// waitLeaderAnswered waits until the lagging follower has forwarded a
// request to the leader (bytes up beyond up0) and the leader has sent it
// something since (held bytes beyond held0): the answer, if any, is in the
// proxy's buffer and cannot have reached the follower.
func (tr *Trio) waitLeaderAnswered(up0, held0 int64) {
	tr.t.Helper()
	p := tr.QuorumLink()
	tb.WaitFor(tr.t, harness.Within, "the follower to forward the request and the leader to answer into the hold", func() (bool, string) {
		s := p.Stats()
		return s.UpBytes > up0 && s.DownHeld > held0, fmt.Sprintf("up %d bytes (before %d), held down %d bytes (before %d)", s.UpBytes, up0, s.DownHeld, held0)
	})
	s := p.Stats()
	tr.t.Logf("nemesis observes: follower forwarded %d bytes to the leader; %d bytes from the leader are held", s.UpBytes-up0, s.DownHeld)
}

// ReadAgainAfterCatchUp ends the stale round of the first diagram: the
// stream is released, B's follower applies v, and B reads again. It returns
// that read and the stale round's history with B's stale read replaced by
// this one (A's write kept as recorded), the history claim S2 says is
// linearizable; B's read stays out of the history recorded from here.
func (tr *Trio) ReadAgainAfterCatchUp(v string) (string, *history.Recorder) {
	tr.t.Helper()
	stale := tr.History.Rec
	tr.CatchUp(v)
	tr.History.Start(v)
	moved := history.NewRecorder(stale.Initial())
	for _, op := range stale.Operations() {
		if op.ClientId == tr.A.id { // A's write; B's stale read is left out
			_ = moved.Span(op.ClientId, op.Input.(history.Input), op.Output.(history.Output), op.Call, op.Return)
		}
	}
	call := stale.Now()
	read := tr.B.Get()
	_ = moved.Span(tr.B.id, history.Input{Op: history.Read}, history.Output{Value: read}, call, stale.Now())
	return read, moved
}

// VerdictOf is porcupine's verdict on rec's history, an observation of
// claim id: the caller states what it means. With cmd/evidence's
// directory set (history.EnvVisualize), its picture is kept and linked
// from the record.
func VerdictOf(t zkserver.TB, id string, rec *history.Recorder) history.Verdict {
	t.Helper()
	return history.Judge(t, rec, id)
}

// BarrierResult is what a blocking operation on the lagging follower did.
type BarrierResult struct {
	DoneBeforeRelease bool
	Err               error
	ReadAfter         string
}

// BlockedUntilRelease runs op (as B, on the lagging follower, while the
// leader's stream is held and after A's write of "1"), shows that op has
// reached the leader and is still pending, releases, and reads.
func (tr *Trio) BlockedUntilRelease(what string, op func() error) BarrierResult {
	tr.t.Helper()
	p := tr.QuorumLink()
	s0 := p.Stats()
	done := make(chan error, 1)
	tr.B.Log.Invoke("%s", what)
	go func() { done <- op() }()
	var r BarrierResult
	// Either the leader has answered into the hold while op is pending, or
	// op returned first: then the claim is refuted at once, not at the
	// wait's bound.
	tb.WaitFor(tr.t, harness.Within, "the follower to forward "+what+" and the leader to answer into the hold, or "+what+" to return", func() (bool, string) {
		select {
		case r.Err = <-done:
			r.DoneBeforeRelease = true
			return true, ""
		default:
		}
		s := p.Stats()
		return s.UpBytes > s0.UpBytes && s.DownHeld > s0.DownHeld, fmt.Sprintf("up %d bytes (before %d), held down %d bytes (before %d)", s.UpBytes, s0.UpBytes, s.DownHeld, s0.DownHeld)
	})
	if r.DoneBeforeRelease {
		tr.B.Log.Ok("%s returned while the leader's stream was held (%v)", what, r.Err)
	} else {
		tr.t.Logf("nemesis observes: %s forwarded to the leader; %d bytes from the leader are held", what, p.Stats().DownHeld)
		tr.B.Log.Info("%s still pending while the leader's stream is held", what)
	}
	tr.Release()
	if !r.DoneBeforeRelease {
		r.Err = tb.Receive(tr.t, harness.Within, "the return of "+what+" after the release", done)
		if r.Err != nil {
			tr.B.Log.Fail("%s: %v", what, r.Err)
		} else {
			tr.B.Log.Ok("%s returned after release", what)
		}
	}
	r.ReadAfter = tr.B.Get()
	return r
}

// WaitsForTheStream is Y1's and Y3's scene: with the leader's stream to
// B's follower held and A's write of "1" committed, B's op (sync or a write
// barrier) runs until the release, and the read after it is taken. The
// proof judges what it returns.
func WaitsForTheStream(t *testing.T, what zh.Text, op func(*Trio) error) BarrierResult {
	t.Helper()
	tr := NewTrio(t)
	tr.HoldLeaderStream()
	tr.A.Set("1")
	r := tr.BlockedUntilRelease(what.En, func() error { return op(tr) })
	claims.Evidence(t, "%s returned before the release: %v; its error: %v; read after it: %q", what, r.DoneBeforeRelease, r.Err, r.ReadAfter)
	return r
}

// Y9's measurement: rounds of the three ways for B to read /x on its
// follower, the three interleaved and their order rotated each round, so
// that the load of a shared 2-core machine falls on all three alike.
// Bounded by y9Rounds and by y9Within, whichever ends first; fewer than
// BarrierMinRounds rounds show nothing.
const (
	BarrierRounds    = 100
	BarrierMinRounds = 30
	BarrierWithin    = 60 * time.Second
)

// BarrierKind is one way to read and what each of its runs cost: its time, and
// the bytes that crossed B's follower's link to the leader while it ran.
type BarrierKind struct {
	Name string
	// Op reads through c, the client whose server the proof checked: it has
	// no other client to measure through.
	Op       func(c *zkclient.Client) error
	Took     []time.Duration
	Up, Down []int64
}

// SameZxid waits until every server reports the same zxid, at least
// atLeast, and returns it.
func SameZxid(t *testing.T, servers []*zkserver.Server, what string, atLeast int64) int64 {
	t.Helper()
	var got int64
	tb.WaitFor(t, harness.Within, what, func() (bool, string) {
		var zs []string
		same := true
		for i, s := range servers {
			st, err := s.Srvr()
			if err != nil {
				return false, fmt.Sprintf("srvr %s: %v", s.Label, err)
			}
			if i == 0 {
				got = st.Zxid
			}
			same = same && st.Zxid == got
			zs = append(zs, fmt.Sprintf("%s %#x", s.Label, st.Zxid))
		}
		return same && got >= atLeast, fmt.Sprintf("%s (want all the same, at least %#x)", strings.Join(zs, ", "), atLeast)
	})
	return got
}

// MedianOf is the median of xs (the upper one of an even count).
func MedianOf[T cmp.Ordered](xs []T) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// OnServer says why c's session is not served by s, or "" when it is:
// the server c's client says it is connected to, and s's own list of its
// connections (cons).
func OnServer(c *zkclient.Client, s *zkserver.Server, servers []*zkserver.Server) string {
	addr := c.Server()
	if addr != s.Client {
		at := addr
		for _, o := range servers {
			if o.Client == addr {
				mode, err := o.Mode()
				if err != nil {
					mode = err.Error()
				}
				at = fmt.Sprintf("%s (%s, %s)", o.Label, addr, mode)
			}
		}
		return fmt.Sprintf("%s's client is connected to %s in session 0x%x; want %s (%s)", c.Name, at, c.SessionID(), s.Label, s.Client)
	}
	if _, err := ConsFor(s, c.SessionID()); err != nil {
		return fmt.Sprintf("%s (%s) does not serve %s's session 0x%x: %v", s.Label, s.Client, c.Name, c.SessionID(), err)
	}
	return ""
}

// ConsFor returns the cons line of server s for session sid.
func ConsFor(s *zkserver.Server, sid int64) (string, error) {
	a, err := zkserver.FourLetter(s.Client, "cons", 2*time.Second)
	if err != nil {
		return "", err
	}
	needle := fmt.Sprintf("sid=0x%x", sid)
	for _, l := range strings.Split(a, "\n") {
		if strings.Contains(l, needle) {
			return strings.TrimSpace(l), nil
		}
	}
	return "", fmt.Errorf("no connection with %s in cons", needle)
}

// Recved is how many packets server s has received in session sid (cons:
// recved), requests and pings.
func Recved(s *zkserver.Server, sid int64) (int, error) {
	line, err := ConsFor(s, sid)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(ConsField(line, "recved"))
	if err != nil {
		return 0, fmt.Errorf("cons line %q: recved: %w", line, err)
	}
	return n, nil
}

// ConsField reads name=value from a cons line.
func ConsField(line, name string) string {
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == '(' || r == ')' }) {
		if k, v, ok := strings.Cut(f, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// Timing of the ZOOKEEPER-1675 window: the old leader keeps believing it
// leads until its followers on the other side have not acked for about
// syncLimit × tickTime (2.5 s here), and steps down about a tick later;
// from the cut to B's read the scenario takes 0.3-0.9 s (0.31-0.32 s in
// the records of both backends, where Y2's Example runs alone after every
// Test; up to 0.91 s on the container backend with its five just
// started). A shorter window would end the run sooner by what it saves,
// and risk a window closed before the read (not shown).
const (
	zk1675Tick      = 500 * time.Millisecond
	zk1675SyncLimit = 5
)

// ZK1675 is the Y2 scene: five servers with a proxy on every link and x=0
// applied on all of them. old leads; oldFollower is one of its followers,
// and B, a participant, is its client; the other three servers are the
// side that elects a new leader once cut off.
type ZK1675 struct {
	t zkserver.TB
	*harness.Cluster
	Old, OldFollower *zkserver.Server
	newSide          []*zkserver.Server
	B                *XClient
	History          *XHistory
	cutAt            time.Time
}

// zk1675Five are Y2's own five servers, stopped when the scene ends: Y2
// is their only user, so giving them back to a pool would only wait for
// the healed pair to rejoin (about 4.5 s) for nobody. Y2's Example runs
// last, so they are started ahead, beside the Examples before it.
var zk1675Five = harness.NewAhead("Y2", func(t zkserver.TB) *harness.Cluster {
	return harness.StartCluster(t, 5, zkserver.WithTickTime(zk1675Tick), zkserver.WithLimits(10, zk1675SyncLimit))
})

func NewZK1675(t zkserver.TB) *ZK1675 {
	t.Helper()
	e := zk1675Five.Get(t)
	w := &ZK1675{t: t, Cluster: e, Old: e.Leader(), OldFollower: e.Followers()[0], History: newXHistory("0")}
	for _, s := range e.Servers {
		if s != w.Old && s != w.OldFollower {
			w.newSide = append(w.newSide, s)
		}
	}
	t.Logf("roles: old leader %s, old follower %s, new side %v", w.Old.Label, w.OldFollower.Label, harness.IDs(w.newSide...))
	setup := zkclient.Connect(t, "S", []string{w.Old.Client})
	if _, err := setup.Create(XPath, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", XPath, err)
	}
	want, _ := w.Old.Srvr()
	tb.WaitFor(t, harness.Within, "every server to apply x=0", func() (bool, string) {
		var seen []string
		ok := true
		for _, s := range e.Servers {
			st, err := s.Srvr()
			ok = ok && err == nil && st.Zxid >= want.Zxid
			seen = append(seen, fmt.Sprintf("%s=0x%x", s.Label, st.Zxid))
		}
		return ok, strings.Join(seen, " ")
	})
	w.B = w.History.Join(t, "B", 2, w.OldFollower)
	return w
}

// Cut partitions {old leader, old follower} from the new side,
// asymmetrically: the three see their connections close and elect at once,
// while the old leader's ends stay open and silent, so it goes on leading
// for about syncLimit × tickTime.
func (w *ZK1675) Cut() {
	w.t.Helper()
	claims.Phase(w.t, "asymmetric partition: {%s, %s} | %v", w.Old.Label, w.OldFollower.Label, harness.IDs(w.newSide...))
	w.cutAt = time.Now()
	w.Links.PartitionAsym(harness.IDs(w.Old, w.OldFollower), harness.IDs(w.newSide...))
}

// NewLeader waits until the new side has elected a leader and returns it.
func (w *ZK1675) NewLeader() *zkserver.Server {
	w.t.Helper()
	var leader *zkserver.Server
	tb.WaitFor(w.t, 2*harness.Within, "the new side to elect a leader", func() (bool, string) {
		var seen []string
		for _, s := range w.newSide {
			m, err := s.Mode()
			if m == "leader" {
				leader = s
				return true, ""
			}
			seen = append(seen, fmt.Sprintf("%s=%s%v", s.Label, m, ErrOrEmpty(err)))
		}
		return false, strings.Join(seen, " ")
	})
	w.t.Logf("new leader %s elected %v after the cut", leader.Label, w.SinceCut())
	return leader
}

// Mode is what s says it is now (srvr's Mode), or why it did not say.
func (w *ZK1675) Mode(s *zkserver.Server) string {
	m, err := s.Mode()
	if err != nil {
		m = "unknown:" + ErrOrEmpty(err)
	}
	if w.cutAt.IsZero() { // no cut yet: time.Since a zero time is Go's largest duration
		w.t.Logf("%s reports mode %s, before the cut", s.Label, m)
		return m
	}
	w.t.Logf("%s reports mode %s, %v after the cut", s.Label, m, w.SinceCut())
	return m
}

// WaitStepDown waits until the old leader no longer reports leading, and
// logs how long after the cut that was: how long the window stayed open.
func (w *ZK1675) WaitStepDown() {
	w.t.Helper()
	tb.WaitFor(w.t, 4*harness.Within, "the old leader to step down", func() (bool, string) {
		m, err := w.Old.Mode()
		return m != "leader", fmt.Sprintf("mode %q%v", m, ErrOrEmpty(err))
	})
	w.t.Logf("the old leader stepped down %v after the cut (syncLimit × tickTime = %v)", w.SinceCut(), zk1675SyncLimit*zk1675Tick)
}

// SinceCut is how long ago the cut was made.
func (w *ZK1675) SinceCut() time.Duration { return time.Since(w.cutAt).Round(time.Millisecond) }

func ErrOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return " " + err.Error()
}

// ReadAs reads path as the actor and returns the value and its stat.
func ReadAs(t zkserver.TB, c *zkclient.Client, a claims.Actor, path string) (string, *zk.Stat) {
	t.Helper()
	a.Invoke("get %s", path)
	v, st, err := c.Get(path)
	if err != nil {
		a.Fail("%v", err)
		t.Fatalf("get %s: %v", path, err)
	}
	a.Ok("%q", v)
	return string(v), st
}

// Timing of Y7: the held acknowledgements must not make the leader drop
// those followers (syncLimit × tickTime = 10 s) while the test looks.
const (
	HeldAcksTick      = time.Second
	HeldAcksSyncLimit = 10
)

// SyncAs runs a sync as the actor and fails unless it returns within d.
func SyncAs(t zkserver.TB, c *zkclient.Client, a claims.Actor, d time.Duration) {
	t.Helper()
	a.Invoke("sync %s", XPath)
	done := make(chan error, 1)
	go func() { _, err := c.Sync(XPath); done <- err }()
	if err := tb.Receive(t, d, "the return of "+a.Name+"'s sync", done); err != nil {
		a.Fail("%v", err)
		t.Fatalf("sync: %v", err)
	}
	a.Ok("sync")
}

// ReadYourWrite is the first half of S4: B pipelines set and get through
// its own proxy to the lagging follower, and C reads there too, while the
// leader's stream to that follower is held. It returns the pair in flight.
func ReadYourWrite(tr *Trio) *Pipelined {
	t := tr.t
	t.Helper()
	p := zkserver.ClientProxy(t, "B-proxy", tr.Lagging)
	B := zkclient.Connect(t, "B2", []string{p.Addr()})
	C := zkclient.Connect(t, "C", []string{tr.Lagging.Client})
	pb, pc := claims.NewActor(t, "B2"), claims.NewActor(t, "C")
	tr.HoldLeaderStream()
	pl := &Pipelined{tr: tr, pb: pb, wrote: make(chan Reply, 1), read: make(chan Reply, 1)}
	u0, q := p.Stats().UpBytes, tr.QuorumLink().Stats()
	pb.Invoke("set %s \"7\"", XPath)
	go func() { st, err := B.Set(XPath, []byte("7"), -1); pl.wrote <- Reply{"7", st, err} }()
	tr.waitLeaderAnswered(q.UpBytes, q.DownHeld)
	// The proxy counts the set's bytes after writing them, so the follower
	// can forward the set before they are counted.
	tb.WaitFor(t, harness.Within, "S4 check: B's set counted through B's proxy", func() (bool, string) {
		n := p.Stats().UpBytes
		return n > u0, fmt.Sprintf("%d bytes up (before the set: %d)", n, u0)
	})
	u1 := p.Stats().UpBytes
	pb.Invoke("get %s", XPath)
	go func() { v, st, err := B.Get(XPath); pl.read <- Reply{string(v), st, err} }()
	tb.WaitFor(t, harness.Within, "B's get to reach its follower", func() (bool, string) {
		n := p.Stats().UpBytes
		return n > u1, fmt.Sprintf("%d bytes up (after the set: %d)", n, u1)
	})
	pl.C, _ = ReadAs(t, C, pc, XPath)
	// C, on the same follower, reading B's value means the follower was
	// not lagging: the run says nothing about S4, so this comes first.
	if pl.C == "7" {
		claims.NotShown(t, "S4", "C read %q; want the follower's older value", pl.C)
	}
	return pl
}

// Reply is the answer to one of B's requests in S4: the value, its stat
// and its error.
type Reply struct {
	V   string
	St  *zk.Stat
	Err error
}

// Pipelined is B's set and get in flight through the lagging follower,
// and what C read there (C).
type Pipelined struct {
	tr          *Trio
	pb          claims.Actor
	C           string
	wrote, read chan Reply
	early       *Reply
}

// EarlyRead returns B's read if it has returned while the leader's stream
// is held, before B's own write could commit.
func (pl *Pipelined) EarlyRead() (Reply, bool) {
	select {
	case r := <-pl.read:
		pl.early = &r
		return r, true
	default:
		return Reply{}, false
	}
}

// AfterRelease releases the leader's stream and returns the answers to B's
// set and get.
func (pl *Pipelined) AfterRelease() (set, get Reply) {
	t := pl.tr.t
	t.Helper()
	pl.pb.Info("set and get pending while C, on the same follower, read %q", pl.C)
	pl.tr.Release()
	w := <-pl.wrote
	r := pl.early
	if r == nil {
		got := <-pl.read
		r = &got
	}
	if w.Err != nil || r.Err != nil {
		t.Fatalf("after release: set %v, get %v", w.Err, r.Err)
	}
	pl.pb.Ok("set: mzxid 0x%x", w.St.Mzxid)
	pl.pb.Ok("get: %q mzxid 0x%x", r.V, r.St.Mzxid)
	claims.Evidence(t, "on the lagging follower C read %q while B's get, sent after B's set, returned B's own %q at the set's zxid 0x%x", pl.C, r.V, r.St.Mzxid)
	return w, *r
}

// Mover dials whichever server it points at (with no target, the address
// the client asked for); moveTo closes the connections it gave out, so the
// client dials again and lands on the new server, and redirect leaves them
// open, so only the client's next dial lands there.
type Mover struct {
	mu     sync.Mutex
	target string
	Dials  map[string]int
	conns  []net.Conn
}

func (m *Mover) Dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	m.mu.Lock()
	target := cmp.Or(m.target, addr)
	m.Dials[target]++
	m.mu.Unlock()
	c, err := net.DialTimeout(network, target, timeout)
	if err == nil {
		m.mu.Lock()
		m.conns = append(m.conns, c)
		m.mu.Unlock()
	}
	return c, err
}

func (m *Mover) moveTo(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.target = addr
	for _, c := range m.conns {
		_ = c.Close()
	}
	m.conns = nil
}

func (m *Mover) Redirect(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.target = addr
}

func (m *Mover) DialsTo(addr string) int { m.mu.Lock(); defer m.mu.Unlock(); return m.Dials[addr] }

// AheadReader is S4's B once it wrote: its session, its mover and the
// zxid it has seen; once moved, its mark of states and its session before
// the move.
type AheadReader struct {
	B    *zkclient.Client
	pb   claims.Actor
	m    *Mover
	seen int64
	mark int
	sid  int64
}

// WriteAhead, the second half of S4's first step, connects B through a mover to the fresh follower, holds the
// leader's stream to the lagging one and has B write: the lagging follower
// is then behind B.
func WriteAhead(tr *Trio) *AheadReader {
	t := tr.t
	t.Helper()
	m := &Mover{target: tr.fresh.Client, Dials: map[string]int{}}
	B := zkclient.Connect(t, "B3", []string{tr.fresh.Client}, zkclient.WithDialer(m.Dial))
	pb := claims.NewActor(t, "B3")
	tr.HoldLeaderStream()
	pb.Invoke("set %s \"8\" (through %s)", XPath, tr.fresh.Label)
	st, err := B.Set(XPath, []byte("8"), -1)
	if err != nil {
		t.Fatalf("set: %v", err)
	}
	pb.Ok("zxid 0x%x", st.Mzxid)
	behind, err := tr.Lagging.Srvr()
	if err != nil {
		t.Fatalf("srvr %s: %v", tr.Lagging.Label, err)
	}
	if behind.Zxid >= st.Mzxid {
		claims.NotShown(t, "S4", "%s is at zxid 0x%x; want it behind B's 0x%x", tr.Lagging.Label, behind.Zxid, st.Mzxid)
	}
	claims.Phase(t, "B, having seen 0x%x, is moved to %s, whose last zxid is 0x%x", st.Mzxid, tr.Lagging.Label, behind.Zxid)
	return &AheadReader{B: B, pb: pb, m: m, seen: st.Mzxid}
}

// noGoingBackRefusal is the lagging server's log line when it turns B away.
const noGoingBackRefusal = "Refusing session" // 3.9 adds the session id: "Refusing session(0x…) request"

// TurnedAway moves B to the lagging follower, sends a get and waits until
// B has dialled it twice. It returns B's states since the move and its
// get's answer, if it came (nil while pending).
func (b *AheadReader) TurnedAway(tr *Trio) (states []zk.State, read *Reply) {
	t, B := tr.t, b.B
	t.Helper()
	tr.Lagging.WatchLog(noGoingBackRefusal)
	b.mark = B.Mark()
	b.m.moveTo(tr.Lagging.Client)
	b.sid = B.SessionID()
	b.pb.Invoke("get %s (on %s)", XPath, tr.Lagging.Label)
	got := make(chan Reply, 1)
	go func() { v, st, err := B.Get(XPath); got <- Reply{string(v), st, err} }()
	tb.WaitFor(t, 2*harness.Within, "S4: B to be turned away by "+tr.Lagging.Label+" twice", func() (bool, string) {
		n := b.m.DialsTo(tr.Lagging.Client)
		return n >= 2, fmt.Sprintf("%d dials to %s; states since the move %v", n, tr.Lagging.Label, B.States()[b.mark:])
	})
	states = B.States()[b.mark:]
	select {
	case r := <-got:
		if r.Err != nil {
			b.pb.Fail("get: %v", r.Err)
		} else {
			b.pb.Ok("%q", r.V)
		}
		return states, &r
	default:
		b.pb.Info("get pending")
		return states, nil
	}
}

// Refusal waits for the lagging server's log line that turns B away.
func (b *AheadReader) Refusal(tr *Trio) (string, error) {
	return tr.Lagging.WaitLog(harness.Within, noGoingBackRefusal)
}

// RefusalNamesTheZxid states the refusal the lagging server logged, said,
// and wants it to name the zxid B has seen: else the server turned B away
// for something else, and the run says nothing about S4.
func (b *AheadReader) RefusalNamesTheZxid(tr *Trio, said string) {
	t := tr.t
	t.Helper()
	claims.Evidence(t, "after %d dials to %s, B has no session there (states since the move %v); the server logged: %s", b.m.DialsTo(tr.Lagging.Client), tr.Lagging.Label, b.B.States()[b.mark:], said)
	if want := fmt.Sprintf("seen zxid 0x%x", b.seen); !strings.Contains(said, want) {
		claims.NotShown(t, "S4", "got the server's line %q; want it to name B's zxid (%q)", said, want)
	}
}

// BackWhenCaughtUp releases the leader's stream, waits for B's session
// and returns what B reads, with its session before the move and now.
func (b *AheadReader) BackWhenCaughtUp(tr *Trio) (v string, before, now int64) {
	t, B := tr.t, b.B
	t.Helper()
	tr.Release()
	if err := B.WaitStateSince(b.mark, zk.StateHasSession, zkclient.ConnectWithin); err != nil {
		t.Fatalf("B after the release: %v", err)
	}
	v, _ = ReadAs(t, B, b.pb, XPath)
	claims.Evidence(t, "after %s caught up B has its session 0x%x again (was 0x%x) and read %q", tr.Lagging.Label, B.SessionID(), b.sid, v)
	return v, b.sid, B.SessionID()
}
