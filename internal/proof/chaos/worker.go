package chaos

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/fencescene"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/history"
	"github.com/zk19/zk19/internal/proof/scene"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

// chaosWorker is one worker: its own session through its own proxies (one
// per server), a Locker on its current session, and its drawn pauses.
type chaosWorker struct {
	run     *chaosRun
	id      int
	name    string
	a       claims.Actor
	c       *zkclient.Client
	proxies []*faultproxy.Proxy
	trace   *locktrace.Trace
	lost    *lostCreates
	l       *lock.Locker
	session int64
	pause   func() time.Duration
	freeze  chan *freeze
	atHold  chan func() // the nemesis's, run in the cycle once the worker holds

	cycles, acquisitions, sessions int
	ids                            []string // its sessions, as the server's dump writes them
	eventful                       bool
	routine                        []fence.Token // tokens of the uneventful cycles not yet reported

	mu    sync.Mutex
	lines [][2]string // the cycle's lines: kind, text
	cut   int         // lines dropped past chaosTraceLines
}

func (run *chaosRun) newWorker(i int) *chaosWorker {
	t := run.t
	w := &chaosWorker{run: run, id: i, name: fmt.Sprintf("W%d", i+1), freeze: make(chan *freeze, 1), atHold: make(chan func(), 1),
		pause: Pauses(run.plan.Seed, run.index, i, chaosPauseMax)}
	w.a = claims.NewActor(t, w.name)
	var addrs []string
	for _, s := range run.servers {
		p := zkserver.ClientProxy(t, w.name+"-"+s.Label, s)
		w.proxies = append(w.proxies, p)
		addrs = append(addrs, p.Addr())
	}
	w.c = zkclient.Connect(t, w.name, addrs, zkclient.WithSessionTimeout(harness.ExpirySessionTimeout), zkclient.Quiet())
	w.lost = &lostCreates{sum: run.sum}
	w.trace = locktrace.Compose(scene.RecordTrace(w.step), w.lost.trace(), &locktrace.Trace{
		Reply: func(r locktrace.ReplyInfo) {
			if r.Err != nil {
				w.markEventful()
			}
		},
		Recovered: func(locktrace.NodeInfo) { w.markEventful() },
		Ended: func(i locktrace.EndInfo) {
			if i.End != locktrace.EndReleased {
				w.markEventful()
			}
		},
	})
	return w
}

// step keeps one of the lock's steps of the current cycle; only an
// eventful cycle logs them. Names under the root are long enough without
// it.
func (w *chaosWorker) step(typ, format string, args ...any) {
	w.line(typ, "%s", strings.ReplaceAll(fmt.Sprintf(format, args...), w.run.root+"/", ""))
}

// markEventful says the current cycle met a fault: a failed request, a
// lost or abandoned candidacy, or a recovery.
func (w *chaosWorker) markEventful() {
	w.mu.Lock()
	w.eventful = true
	w.mu.Unlock()
}

func (w *chaosWorker) line(typ, format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lines) == chaosTraceLines {
		w.cut++
		return
	}
	w.lines = append(w.lines, [2]string{typ, fmt.Sprintf(format, args...)})
}

func (w *chaosWorker) event(typ, format string, args ...any) {
	w.mu.Lock()
	w.eventful = true
	w.mu.Unlock()
	w.line(typ, format, args...)
}

func (w *chaosWorker) loop() {
	defer w.run.wg.Done()
	for w.run.ctx.Err() == nil {
		w.cycle()
	}
	w.reportRoutine()
}

// cycle is one turn: acquire, take the token (and stop there if the
// nemesis froze the worker), pause, write, release.
func (w *chaosWorker) cycle() {
	w.cycles++
	w.mu.Lock()
	w.lines, w.cut, w.eventful = nil, 0, false
	w.mu.Unlock()
	h, err := w.acquire()
	if h == nil {
		if w.run.ctx.Err() != nil {
			return // stopped while waiting: nothing happened worth a line
		}
		w.acquireFailed(err)
		w.report(h)
		return
	}
	w.acquisitions++
	w.run.acquired.Add(1)
	w.run.sum.Add(Acquisitions, 1)
	w.line("ok", "acquire %s token %v", path.Base(h.Path), h.Token)
	hold := Hold{Who: w.name, Token: h.Token, Node: h.Path, Session: w.session, Since: w.run.since()}
	others, unpin := w.run.holders.Begin(hold)
	if len(others) > 0 {
		w.run.sum.Add(Overlaps, 1)
		var names []string
		for _, o := range others {
			names = append(names, o.String())
		}
		w.event("info", "overlap: from the lock's view %s still holds", strings.Join(names, " and "))
	}
	// Before the freeze, the pause and the writes: the overlapped holds
	// stay pinned (they cannot end and delete their nodes) until it is done.
	w.run.readBack(w, hold, others)
	unpin()
	select {
	case f := <-w.atHold:
		w.event("info", "holding: the nemesis arms a fault")
		f()
	default:
	}
	fr := w.takeFreeze(h)
	// The GC pause is the workload, not a wait for an event: the holder
	// stops with its token for a drawn time.
	select {
	case <-time.After(w.pause()):
	case <-w.run.ctx.Done():
	}
	var at Moment
	if fr != nil {
		at = w.run.momentOf(h)
	}
	got := w.writeAll(h.Token, at)
	if fr != nil {
		fr.wrote <- frozenWrite{got: got, at: at}
	}
	w.run.holders.End(w.name)
	w.release(h)
	w.report(h)
}

// acquire acquires on a Locker of the client's current session. Acquire
// recovers a create whose reply was lost by itself; the trace says how
// (lostCreates), and what it returned settles what the trace did not.
func (w *chaosWorker) acquire() (*lock.Held, error) {
	if w.l == nil || w.c.SessionID() != w.session {
		if err := w.relock(); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(w.run.ctx, chaosAcquireWithin)
	defer cancel()
	w.line("invoke", "acquire")
	h, err := w.l.Acquire(ctx)
	w.lost.after(err)
	if ce, ok := errors.AsType[*lock.CreateError](err); ok && errors.Is(err, lock.ErrAmbiguous) {
		w.run.anomaly("%s: the recovery of create %s found several nodes of one create: %v", w.name, ce.GUID, err)
	}
	return h, err
}

// relock makes a Locker for the client's current session, once it has one.
func (w *chaosWorker) relock() error {
	if err := w.c.WaitConnected(zkclient.ConnectWithin); err != nil {
		return err
	}
	sid := w.c.SessionID()
	if w.session != 0 && sid != w.session {
		w.run.sum.Add(SessionsEnded, 1)
		w.event("info", "session 0x%x ended; a new Locker on session 0x%x", w.session, sid)
	}
	w.session, w.sessions = sid, w.sessions+1
	w.ids = append(w.ids, fmt.Sprintf("0x%x", sid))
	w.l = lock.New(w.c.Conn, w.run.root, lock.WithCzxidDomain(), lock.WithTrace(w.trace))
	return nil
}

func (w *chaosWorker) acquireFailed(err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		w.run.sum.Add(GaveUp, 1)
	}
	w.event("fail", "acquire: %v", err)
	if err := w.c.WaitConnected(zkclient.ConnectWithin); err != nil {
		w.event("info", "%v", err)
	}
}

// takeFreeze stops the worker, holding, when the nemesis asked for it,
// until the nemesis opens the gate.
func (w *chaosWorker) takeFreeze(h *lock.Held) *freeze {
	select {
	case fr := <-w.freeze:
		w.event("info", "frozen with token %v", h.Token)
		fr.held <- h
		<-fr.gate
		w.line("info", "gate open")
		return fr
	default:
		return nil
	}
}

// writeAll writes a value of its own with tok to every resource, in order,
// and reads each fenced one after, all recorded. at is what a frozen
// worker saw just before (momentOf): whether the write is stale-late.
func (w *chaosWorker) writeAll(tok fence.Token, at Moment) []fence.Result {
	value := fmt.Sprintf("%s#%d %v", w.name, w.cycles, tok)
	note, stale := "", at.Stale()
	switch {
	case stale:
		note = " (stale-late: its node is gone, a higher token was accepted)"
	case at.Checked:
		note = " (frozen, not stale-late: " + at.String() + ")"
	}
	w.line("invoke", "write %q with token %v%s", value, tok, note)
	got := make([]fence.Result, len(w.run.res))
	var parts []string
	all := true
	for i, r := range w.run.res {
		var call int64
		if r.rec != nil {
			call = r.rec.Now()
		}
		res, err := fencescene.Outcome(r.r.Write(context.Background(), tok, value))
		if err != nil {
			w.run.anomaly("%s: write to %s: %v", w.name, r.name, err)
			continue
		}
		if r.rec != nil {
			if err := r.span(w.id, value, res, call); err != nil {
				w.run.anomaly("%s: history of %s: %v", w.name, r.name, err)
			}
		}
		got[i] = res
		r.ledger.Record(w.name, tok, res)
		w.run.sum.Write(r.name, res.Accepted, stale)
		parts = append(parts, fmt.Sprintf("%s %s (mark %v)", r.name, map[bool]string{true: "accepted", false: "refused"}[res.Accepted], res.Mark))
		all = all && res.Accepted
	}
	if all {
		w.line("ok", "write: %s", strings.Join(parts, ", "))
	} else {
		w.event("fail", "write: %s", strings.Join(parts, ", "))
	}
	w.readAll()
	return got
}

// readAll reads each fenced resource, for its history.
func (w *chaosWorker) readAll() {
	for _, r := range w.run.res {
		if r.rec == nil {
			continue
		}
		call := r.rec.Now()
		v, _, _, err := r.r.Read(context.Background())
		if err != nil {
			w.run.anomaly("%s: read %s: %v", w.name, r.name, err)
			continue
		}
		if err := r.rec.Span(w.id, history.Input{Op: history.Read}, history.Output{Value: v}, call, r.rec.Now()); err != nil {
			w.run.anomaly("%s: history of %s: %v", w.name, r.name, err)
		}
	}
}

// release releases with its own bound: a stopping run still releases.
func (w *chaosWorker) release(h *lock.Held) {
	ctx, cancel := context.WithTimeout(context.Background(), chaosAcquireWithin)
	defer cancel()
	w.line("invoke", "release %s", path.Base(h.Path))
	err := h.Release(ctx)
	switch {
	case err == nil:
		w.run.sum.Add(Released, 1)
		w.line("ok", "release")
	case errors.Is(err, lock.ErrLostCandidacy), errors.Is(err, lock.ErrSessionChanged):
		w.run.sum.Add(ReleaseLost, 1)
		w.event("fail", "release: %v", err)
	default:
		w.run.sum.Add(ReleaseUnknown, 1)
		w.event("info", "release: %v", err)
	}
}

// report logs an eventful cycle in full, after the uneventful ones before
// it in one line; an uneventful cycle is only counted.
func (w *chaosWorker) report(h *lock.Held) {
	w.mu.Lock()
	lines, cut, eventful := w.lines, w.cut, w.eventful
	w.mu.Unlock()
	if !eventful {
		if h != nil {
			w.routine = append(w.routine, h.Token)
		}
		return
	}
	w.reportRoutine()
	for _, l := range lines {
		w.a.Log(l[0], "%s", l[1])
	}
	if cut > 0 {
		w.a.Info("… %d more lines of this cycle not logged", cut)
	}
}

func (w *chaosWorker) reportRoutine() {
	if n := len(w.routine); n > 0 {
		w.a.Ok("%d uneventful cycles (acquire, pause, write: all accepted, release ok), tokens %v … %v", n, w.routine[0], w.routine[n-1])
		w.routine = w.routine[:0]
	}
}
