package chaos

import (
	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/history"
)

// chaosResource is one resource the workers write to, with what it
// accepted (in its commit order) and, for a fenced one, its register
// history.
type chaosResource struct {
	name   string
	r      fence.Resource
	fenced bool
	ledger *Ledger
	rec    *history.Recorder
}

// span records a write in the history: an accepted write is a write; a
// refused one changed nothing and returned the value it saw, so it is a
// read of that value.
func (r *chaosResource) span(client int, value string, res fence.Result, call int64) error {
	in, out := history.Input{Op: history.Write, Value: value}, history.Output{}
	if !res.Accepted {
		in, out = history.Input{Op: history.Read}, history.Output{Value: res.Prev}
	}
	return r.rec.Span(client, in, out, call, r.rec.Now())
}
