package lock

import (
	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
)

// Trace is the recipe's test seam, in the manner of
// net/http/httptrace.ClientTrace: a struct of optional callbacks at the
// recipe's steps, passed to New with WithTrace. A service passes none.
//
// Callbacks run on the goroutine that takes the step (the acquiring one, a
// Release's, or a hold's Lost watcher), in the order of the steps. A
// callback that blocks blocks that step: Watching is how claim L8's proof
// deletes the predecessor between the listing and the exists.
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
	// Ended runs when an acquisition ended without a hold, or a hold ended.
	Ended func(EndInfo)
}

// Op is a request the recipe sends.
type Op int

// The requests of the recipe.
const (
	OpCreate   Op = iota + 1 // create EPHEMERAL_SEQUENTIAL, never retried
	OpSync                   // sync of the parent (Recover)
	OpChildren               // getChildren of the parent
	OpExists                 // exists, with a watch on a predecessor or own node
	OpDelete                 // delete of the own node
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
// error (zk.ErrConnectionClosed) means the outcome is unknown.
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
	// EndAbandoned: an acquisition failed or was cancelled; it deletes its
	// own node next.
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

// WithTrace makes the Locker call t's callbacks.
func WithTrace(t *Trace) Option { return optionFunc(func(l *Locker) { l.trace = t }) }

// The calls below are nil-safe, so the recipe calls them unconditionally.

func (t *Trace) request(op Op, path string, watch bool) {
	if t != nil && t.Request != nil {
		t.Request(RequestInfo{Op: op, Path: path, Watch: watch})
	}
}

func (t *Trace) reply(r ReplyInfo) {
	if t != nil && t.Reply != nil {
		t.Reply(r)
	}
}

func (t *Trace) listed(own string, ord []entry) {
	if t != nil && t.Listed != nil {
		names := make([]string, len(ord))
		for i, e := range ord {
			names[i] = e.name
		}
		t.Listed(ListedInfo{Own: own, Candidates: names})
	}
}

func (t *Trace) watching(own, pred string) {
	if t != nil && t.Watching != nil {
		t.Watching(WatchInfo{Own: own, Predecessor: pred})
	}
}

func (t *Trace) waiting(own, pred string) {
	if t != nil && t.Waiting != nil {
		t.Waiting(WatchInfo{Own: own, Predecessor: pred})
	}
}

func (t *Trace) woke(own, pred string, ev zk.Event) {
	if t != nil && t.Woke != nil {
		t.Woke(WokeInfo{Own: own, Predecessor: pred, Event: ev})
	}
}

func (t *Trace) recovered(path string) {
	if t != nil && t.Recovered != nil {
		t.Recovered(NodeInfo{Path: path})
	}
}

func (t *Trace) held(path string, tok fence.Token) {
	if t != nil && t.Held != nil {
		t.Held(HeldInfo{Path: path, Token: tok})
	}
}

func (t *Trace) ended(path string, end End, err error) {
	if t != nil && t.Ended != nil {
		t.Ended(EndInfo{Path: path, End: end, Err: err})
	}
}
