// Package history records concurrent histories of a single read/write
// register of strings (a ZooKeeper node's data) and checks them for
// linearizability with porcupine.
//
// Operations whose outcome is unknown (a lost reply, a connection loss) are
// recorded with Call.Info; they may or may not have taken effect, at any
// time after their call. They are given an infinite return time and the
// model accepts any output for them, the usual Jepsen/Knossos treatment.
package history

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Op is the kind of a register operation.
type Op uint8

// Register operations.
const (
	Read  Op = iota + 1 // read the register's value
	Write               // overwrite the register's value
)

// String returns "read" or "write".
func (o Op) String() string {
	switch o {
	case Read:
		return "read"
	case Write:
		return "write"
	default:
		return "op(" + strconv.Itoa(int(o)) + ")"
	}
}

// Input is the porcupine input of a register operation.
type Input struct {
	Op Op
	// Value is the value written by a Write; unused for a Read.
	Value string
}

// Output is the porcupine output of a register operation.
type Output struct {
	// Value is the value returned by a Read; unused for a Write.
	Value string
	// Unknown marks an operation whose outcome is not known.
	Unknown bool
}

// infinity is the return time given to operations with an unknown outcome.
const infinity int64 = math.MaxInt64

// Recorder records a history. It is safe for concurrent use. Times are
// nanoseconds on the monotonic clock since the Recorder was created, made
// strictly increasing so that events recorded one after the other never
// share a timestamp (porcupine treats touching intervals as concurrent).
type Recorder struct {
	initial string
	base    time.Time

	mu   sync.Mutex
	last int64 // last time handed out
	ops  []*record
}

type record struct {
	client   int
	in       Input
	out      Output
	call     int64
	ret      int64 // when the outcome was observed; valid if done
	done     bool
	sequence int // insertion order, breaks ties in String
}

// Call is a pending operation returned by Recorder.Invoke.
type Call struct {
	r   *Recorder
	rec *record
}

// NewRecorder returns an empty recorder for a register whose value is
// initially initial.
func NewRecorder(initial string) *Recorder {
	return &Recorder{initial: initial, base: time.Now()}
}

// Initial is the register's value before the history's first operation.
func (r *Recorder) Initial() string { return r.initial }

// Now returns the current time on the recorder's clock, for use with Span.
func (r *Recorder) Now() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tick()
}

// tick advances the clock; r.mu must be held.
func (r *Recorder) tick() int64 {
	r.last = max(r.last+1, int64(time.Since(r.base)))
	return r.last
}

// Invoke records that client invokes op now; value is the value written by
// a Write and is ignored for a Read. Complete the returned Call with Ok or
// Info. A Call never completed is treated as having an unknown outcome.
func (r *Recorder) Invoke(client int, op Op, value string) *Call {
	in := Input{Op: op}
	if op == Write {
		in.Value = value
	}
	rec := &record{client: client, in: in}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec.call = r.tick()
	rec.sequence = len(r.ops)
	r.ops = append(r.ops, rec)
	return &Call{r: r, rec: rec}
}

// Start returns the call's invocation time, e.g. to begin a composite
// interval recorded later with Span.
func (c *Call) Start() int64 {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	return c.rec.call
}

// Ok records that the call returned: a Read returned value, a Write
// succeeded (value is ignored). Only the first Ok or Info takes effect.
func (c *Call) Ok(value string) {
	c.finish(Output{Value: value})
}

// Info records that the call's outcome is unknown: the operation may have
// taken effect at any time after its invocation, or never. Only the first Ok
// or Info takes effect.
func (c *Call) Info() {
	c.finish(Output{Unknown: true})
}

func (c *Call) finish(out Output) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	if c.rec.done {
		return
	}
	if c.rec.in.Op == Write && !out.Unknown {
		out.Value = ""
	}
	c.rec.out = out
	c.rec.ret = c.r.tick()
	c.rec.done = true
}

// Span records a completed operation with an explicit interval [call, ret]
// on the recorder's clock (see Now), e.g. a composite read that starts with
// a sync or barrier write and ends when the read returns. If out.Unknown,
// ret is only the time the outcome was observed and the operation is
// checked as pending forever. Span returns an error for an invalid op or
// ret < call.
func (r *Recorder) Span(client int, in Input, out Output, call, ret int64) error {
	if in.Op != Read && in.Op != Write {
		return fmt.Errorf("history: invalid op %v", in.Op)
	}
	if ret < call {
		return fmt.Errorf("history: %v returns at %d before its call at %d", in.Op, ret, call)
	}
	if in.Op == Read {
		in.Value = ""
	} else if !out.Unknown {
		out.Value = ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, &record{client: client, in: in, out: out, call: call, ret: ret, done: true, sequence: len(r.ops)})
	return nil
}

// Operations returns the history for porcupine: Input and Output hold Input
// and Output values; operations with an unknown or not yet known outcome
// return at infinity.
func (r *Recorder) Operations() []porcupine.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	ops := make([]porcupine.Operation, 0, len(r.ops))
	for _, rec := range r.ops {
		op := porcupine.Operation{ClientId: rec.client, Input: rec.in, Call: rec.call, Output: rec.out, Return: rec.ret}
		if !rec.done || rec.out.Unknown {
			op.Output = Output{Unknown: true}
			op.Return = infinity
		}
		ops = append(ops, op)
	}
	return ops
}

// String renders the history one event per line in time order, Jepsen
// style: `1 invoke read`, `1 ok read "0"`, `0 invoke write "1"`,
// `0 ok write "1"`, `0 info write "1"`. Pending calls have no completion
// line.
func (r *Recorder) String() string {
	type event struct {
		time int64
		seq  int
		line string
	}
	r.mu.Lock()
	events := make([]event, 0, 2*len(r.ops))
	for _, rec := range r.ops {
		what := rec.in.Op.String()
		if rec.in.Op == Write {
			what += " " + strconv.Quote(rec.in.Value)
		}
		events = append(events, event{rec.call, 2 * rec.sequence, fmt.Sprintf("%d invoke %s", rec.client, what)})
		if !rec.done {
			continue
		}
		switch {
		case rec.out.Unknown:
			events = append(events, event{rec.ret, 2*rec.sequence + 1, fmt.Sprintf("%d info %s", rec.client, what)})
		case rec.in.Op == Read:
			events = append(events, event{rec.ret, 2*rec.sequence + 1, fmt.Sprintf("%d ok read %q", rec.client, rec.out.Value)})
		default:
			events = append(events, event{rec.ret, 2*rec.sequence + 1, fmt.Sprintf("%d ok %s", rec.client, what)})
		}
	}
	r.mu.Unlock()
	slices.SortStableFunc(events, func(a, b event) int {
		if a.time != b.time {
			if a.time < b.time {
				return -1
			}
			return +1
		}
		return a.seq - b.seq
	})
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e.line)
		b.WriteByte('\n')
	}
	return b.String()
}
