// Package locktrace is the test seam of package lock, in the manner of
// net/http/httptrace: a Trace is a struct of optional callbacks at the
// recipe's steps, given to a Locker with lock.WithTrace. A service passes
// none; a test observes the recipe's requests and decisions with it, and
// steers it by blocking in a callback (claim L8's proof deletes the
// predecessor from inside Watching, between the listing and the exists).
//
// The seam lives apart from package lock so that lock's page shows the
// recipe, not its instruments, as net/http keeps httptrace apart.
//
// A Trace is carried with the Locker, not with a context as httptrace's
// are: a hold outlives the context of the acquisition that made it (its
// Lost watcher), and so does the cleanup of an abandoned candidate. Traces
// compose: Compose(a, b) calls a's callback and then b's at every step, and
// lock.WithTrace given twice composes the two.
//
// Callbacks run on the goroutine that takes the step (the acquiring one, a
// Release's, a hold's Lost watcher, or a cleanup running while its caller
// still waits for it), in the order of the steps. Once a caller has stopped
// waiting (its context ended), the requests that finish or clean up after
// it are not traced: a test that has returned is never called back.
package locktrace

import (
	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
)

// Trace holds the optional callbacks. A nil Trace, and a nil callback, is
// skipped.
type Trace struct {
	// Request runs before each request the recipe sends to the server.
	Request func(RequestInfo)
	// Reply runs when that request returned, with its result.
	Reply func(ReplyInfo)
	// Listed runs after an acquisition listed the parent: its own node and
	// the candidates in sequence order.
	Listed func(ListedInfo)
	// Watching runs after an acquisition chose the predecessor it waits
	// for and before it sets the watch on it with exists.
	Watching func(WatchInfo)
	// Waiting runs when the watch is set and the acquisition blocks on it.
	Waiting func(WatchInfo)
	// Woke runs when an event ended the wait. Any event only means "list
	// again"; it is never success by itself.
	Woke func(WokeInfo)
	// Recovered runs when Recover adopted the node of a lost create.
	Recovered func(NodeInfo)
	// Held runs when an acquisition holds the lock.
	Held func(HeldInfo)
	// Guarded runs each time a hold has set its watch on its own node: once
	// after it is made, and again after a data change on the node.
	Guarded func(NodeInfo)
	// Ended runs when an acquisition ended without a hold, or a hold ended.
	Ended func(EndInfo)
}

// Compose returns a Trace that calls the callbacks of ts in order at each
// step; nil Traces and nil callbacks are skipped.
func Compose(ts ...*Trace) *Trace {
	var live []*Trace
	for _, t := range ts {
		if t != nil {
			live = append(live, t)
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0]
	}
	return &Trace{
		Request:   chain(live, func(t *Trace) func(RequestInfo) { return t.Request }),
		Reply:     chain(live, func(t *Trace) func(ReplyInfo) { return t.Reply }),
		Listed:    chain(live, func(t *Trace) func(ListedInfo) { return t.Listed }),
		Watching:  chain(live, func(t *Trace) func(WatchInfo) { return t.Watching }),
		Waiting:   chain(live, func(t *Trace) func(WatchInfo) { return t.Waiting }),
		Woke:      chain(live, func(t *Trace) func(WokeInfo) { return t.Woke }),
		Recovered: chain(live, func(t *Trace) func(NodeInfo) { return t.Recovered }),
		Held:      chain(live, func(t *Trace) func(HeldInfo) { return t.Held }),
		Guarded:   chain(live, func(t *Trace) func(NodeInfo) { return t.Guarded }),
		Ended:     chain(live, func(t *Trace) func(EndInfo) { return t.Ended }),
	}
}

func chain[I any](ts []*Trace, field func(*Trace) func(I)) func(I) {
	var fs []func(I)
	for _, t := range ts {
		if f := field(t); f != nil {
			fs = append(fs, f)
		}
	}
	if len(fs) < 2 {
		if len(fs) == 1 {
			return fs[0]
		}
		return nil
	}
	return func(i I) {
		for _, f := range fs {
			f(i)
		}
	}
}

// Op is a request the recipe sends.
type Op int

// The requests of the recipe.
const (
	OpCreate   Op = iota + 1 // create EPHEMERAL_SEQUENTIAL, never retried
	OpSync                   // sync of the parent (Recover, and a cleanup after a lost create)
	OpChildren               // getChildren of the parent
	OpExists                 // exists, with a watch on a predecessor or own node
	OpDelete                 // delete of the own node
	// OpCreateParent: createContainer of the missing parent (WithParents),
	// sent again after a lost connection (NodeExists then means made).
	// The creates of missing ancestors before it are not traced.
	OpCreateParent
)

func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpSync:
		return "sync"
	case OpChildren:
		return "children"
	case OpExists:
		return "exists"
	case OpDelete:
		return "delete"
	case OpCreateParent:
		return "create-parent"
	}
	return "op?"
}

// RequestInfo is a request about to be sent.
type RequestInfo struct {
	Op    Op
	Path  string // for OpCreate, the prefix the server appends to
	Watch bool   // OpExists sets a watch
}

// ReplyInfo is a request's result. Err is nil on success; a connection
// error (zk.ErrConnectionClosed) means the outcome is unknown, and a
// context's error means the caller stopped waiting for the reply.
type ReplyInfo struct {
	Op       Op
	Path     string
	Err      error
	Node     string   // OpCreate: the node's name, without the parent
	Children []string // OpChildren: as the server listed them
	Exists   bool     // OpExists
	Stat     *zk.Stat // OpExists, OpChildren: the node's (the parent's) stat
}

// ListedInfo is one listing's view of the queue.
type ListedInfo struct {
	Own        string   // the acquisition's node name
	Candidates []string // node names in sequence order
}

// WatchInfo names an acquisition's node and the predecessor it waits for.
type WatchInfo struct{ Own, Predecessor string }

// WokeInfo is the event that ended a wait.
type WokeInfo struct {
	Own, Predecessor string
	Event            zk.Event
}

// NodeInfo names a node.
type NodeInfo struct{ Path string }

// HeldInfo is a hold as it begins.
type HeldInfo struct {
	Path  string
	Token fence.Token
}

// End says how an acquisition or a hold ended.
type End int

// The ends.
const (
	// EndLost: the candidacy or hold is over (own node gone, session
	// changed); nothing is left to delete.
	EndLost End = iota + 1
	// EndAbandoned: an acquisition failed, was cancelled, or (TryAcquire)
	// found the lock held; it deletes its own node next.
	EndAbandoned
	// EndReleased: Release ended the hold; its delete follows.
	EndReleased
)

func (e End) String() string {
	switch e {
	case EndLost:
		return "lost"
	case EndAbandoned:
		return "abandoned"
	case EndReleased:
		return "released"
	}
	return "end?"
}

// EndInfo is an end.
type EndInfo struct {
	Path string
	End  End
	Err  error // why, for EndLost and EndAbandoned
}
