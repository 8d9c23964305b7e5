package lock

import (
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/lock/locktrace"
)

// WithTrace makes the Locker call t's callbacks (package locktrace, the
// test seam). Given more than once, the traces compose in order.
func WithTrace(t *locktrace.Trace) Option {
	return optionFunc(func(l *Locker) { l.trace.t = locktrace.Compose(l.trace.t, t) })
}

// tracer calls a Trace's callbacks, nil-safe, so the recipe calls them
// unconditionally. A tracer made by detachable goes quiet once detach is
// called: the requests of a cleanup that outlives its caller are not
// traced, so a test that has returned is never called back.
type tracer struct {
	t   *locktrace.Trace
	off *atomic.Bool
}

// detachable returns a copy of tr and the function that silences it.
func (tr tracer) detachable() (tracer, func()) {
	off := new(atomic.Bool)
	return tracer{t: tr.t, off: off}, func() { off.Store(true) }
}

func (tr tracer) on() bool { return tr.t != nil && (tr.off == nil || !tr.off.Load()) }

func (tr tracer) request(op locktrace.Op, path string, watch bool) {
	if tr.on() && tr.t.Request != nil {
		tr.t.Request(locktrace.RequestInfo{Op: op, Path: path, Watch: watch})
	}
}

func (tr tracer) reply(r locktrace.ReplyInfo) {
	if tr.on() && tr.t.Reply != nil {
		tr.t.Reply(r)
	}
}

func (tr tracer) listed(own string, ord []entry) {
	if tr.on() && tr.t.Listed != nil {
		names := make([]string, len(ord))
		for i, e := range ord {
			names[i] = e.name
		}
		tr.t.Listed(locktrace.ListedInfo{Own: own, Candidates: names})
	}
}

func (tr tracer) watching(own, pred string) {
	if tr.on() && tr.t.Watching != nil {
		tr.t.Watching(locktrace.WatchInfo{Own: own, Predecessor: pred})
	}
}

func (tr tracer) waiting(own, pred string) {
	if tr.on() && tr.t.Waiting != nil {
		tr.t.Waiting(locktrace.WatchInfo{Own: own, Predecessor: pred})
	}
}

func (tr tracer) woke(own, pred string, ev zk.Event) {
	if tr.on() && tr.t.Woke != nil {
		tr.t.Woke(locktrace.WokeInfo{Own: own, Predecessor: pred, Event: ev})
	}
}

func (tr tracer) recovered(path string) {
	if tr.on() && tr.t.Recovered != nil {
		tr.t.Recovered(locktrace.NodeInfo{Path: path})
	}
}

func (tr tracer) guarded(path string) {
	if tr.on() && tr.t.Guarded != nil {
		tr.t.Guarded(locktrace.NodeInfo{Path: path})
	}
}

func (tr tracer) held(path string, tok fence.Token) {
	if tr.on() && tr.t.Held != nil {
		tr.t.Held(locktrace.HeldInfo{Path: path, Token: tok})
	}
}

func (tr tracer) ended(path string, end locktrace.End, err error) {
	if tr.on() && tr.t.Ended != nil {
		tr.t.Ended(locktrace.EndInfo{Path: path, End: end, Err: err})
	}
}
