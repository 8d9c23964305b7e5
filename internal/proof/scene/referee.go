package scene

import (
	"fmt"
	"path"
	"sync"

	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock/locktrace"
)

// referee holds the live holds under one parent.
type referee struct {
	mu    sync.Mutex
	holds map[string]string // node path -> the contender holding it
	seen  []string          // each two-holders report, in order
}

var referees = struct {
	sync.Mutex
	m map[string]*referee // by lock parent; parents are per test (harness.TestRoot)
}{m: map[string]*referee{}}

// refereeOf returns the referee of parent, made on first use.
func refereeOf(t zkserver.TB, parent string) *referee {
	referees.Lock()
	defer referees.Unlock()
	r := referees.m[parent]
	if r == nil {
		r = &referee{holds: map[string]string{}}
		referees.m[parent] = r
		t.Cleanup(func() {
			referees.Lock()
			delete(referees.m, parent)
			referees.Unlock()
		})
	}
	return r
}

// others returns the live holds under the parent that are not node.
func (r *referee) others(node string) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for n, who := range r.holds {
		if n != node {
			out[n] = who
		}
	}
	return out
}

func (r *referee) hold(node, who string) { r.mu.Lock(); r.holds[node] = who; r.mu.Unlock() }

func (r *referee) end(node string) { r.mu.Lock(); delete(r.holds, node); r.mu.Unlock() }

// report keeps a two-holders report.
func (r *referee) report(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, msg)
}

// twoHolders returns the first two-holders report under the parent, or "".
// A nil referee has none.
func (r *referee) twoHolders() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seen) == 0 {
		return ""
	}
	return r.seen[0]
}

// referee returns the Trace that tells p's referee of p's holds, and on
// each new hold reads, on p's own session, whether another live hold's
// node is still on the server.
func (p *Contender) referee() *locktrace.Trace {
	r := refereeOf(p.t, p.parent)
	p.Witness.ref = r
	return &locktrace.Trace{
		Held: func(i locktrace.HeldInfo) {
			for node, who := range r.others(i.Path) {
				p.line("invoke", "exists %s (is %s's hold still on the server?)", node, who)
				ok, _, err := p.Session.Conn.Exists(node)
				switch {
				case err != nil:
					p.line("fail", "exists %v (two holders not ruled out)", err)
				case !ok:
					p.line("ok", "false")
				default:
					p.line("ok", "true")
					p.twoHolders(r, fmt.Sprintf("two holders at once: %s holds %s, and %s's hold of %s, never ended, still has its node on the server", p.Name, path.Base(i.Path), who, path.Base(node)))
				}
			}
			r.hold(i.Path, p.Name)
		},
		Ended: func(i locktrace.EndInfo) { r.end(i.Path) },
	}
}

// twoHolders reports msg: the test fails with it (from the recipe's
// goroutine, so with Errorf), and a wait on any contender of the parent
// stops at once with it (see Witness.waitingOn).
func (p *Contender) twoHolders(r *referee, msg string) {
	r.report(msg)
	if p.stopped.Load() {
		return // the test has ended: nothing may log
	}
	p.t.Attr("zk19.twoHolders", msg)
	if e, ok := p.t.(interface{ Errorf(string, ...any) }); ok {
		e.Errorf("%s", msg)
		return
	}
	p.t.Logf("%s", msg) // an Example: its output differs as well
}
