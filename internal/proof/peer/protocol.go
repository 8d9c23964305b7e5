package peer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// RecipeError is a request that the recipe (or the driver around it)
// answered by raising: Class is the exception's class, e.g. kazoo's
// LockTimeout, CancelledError, ConnectionLoss, NoNodeError, or Java's
// InterruptedException, ConnectionLossException.
type RecipeError struct {
	Driver  string `json:"-"` // the driver's name, e.g. kazoo-W
	Cmd     string `json:"-"`
	Class   string `json:"class"`
	Message string `json:"message"`
}

func (e *RecipeError) Error() string {
	return fmt.Sprintf("%s %s raised %s: %s", e.Driver, e.Cmd, e.Class, e.Message)
}

// Event is a line the driver printed between replies.
type Event struct {
	Kind string  `json:"event"` // state, op, watch (and hello, kept out of Events)
	T    float64 `json:"t"`     // seconds since the driver started

	State     string `json:"state"`     // state: the library's word (kazoo's KazooState, Curator's ConnectionState); watch: the KeeperState
	Connected *bool  `json:"connected"` // state: whether the client has a session now, where the driver says
	Session   string `json:"session"`   // state: the session id as hex ("" when none)

	Op     string          `json:"op"`     // op: the client method the recipe called
	Path   string          `json:"path"`   // op, watch: the path
	Phase  string          `json:"phase"`  // op: invoke, ok or fail
	Watch  bool            `json:"watch"`  // op invoke: the call leaves a watch
	Result json.RawMessage `json:"result"` // op ok: what the call returned
	Error  *RecipeError    `json:"error"`  // op fail: what it raised

	Type string `json:"type"` // watch: the EventType, e.g. DELETED
}

func (e Event) String() string {
	at := fmt.Sprintf("[+%.3fs]", e.T)
	switch e.Kind {
	case "state":
		return fmt.Sprintf("%s state %s session=%s", at, e.State, e.Session)
	case "op":
		s := fmt.Sprintf("%s :%s %s %s", at, e.Phase, e.Op, e.Path)
		if e.Watch {
			s += " (watch)"
		}
		if e.Error != nil {
			s += fmt.Sprintf(" %s: %s", e.Error.Class, e.Error.Message)
		}
		if len(e.Result) > 0 && string(e.Result) != "null" {
			s += " -> " + string(e.Result)
		}
		return s
	case "watch":
		return fmt.Sprintf("%s watch %s %s (%s)", at, e.Type, e.Path, e.State)
	}
	return fmt.Sprintf("%s %s", at, e.Kind)
}

func (k *Driver) event(b []byte) {
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		k.logf("%s unparsable event (%v): %s", k.name, err, b)
		return
	}
	k.logf("%s %s", k.name, e)
	k.mu.Lock()
	k.events = append(k.events, e)
	close(k.changed)
	k.changed = make(chan struct{})
	k.mu.Unlock()
}

// Events returns every event so far, oldest first. Its length is the since
// to give WaitEvent for events that have not happened yet.
func (k *Driver) Events() []Event {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]Event(nil), k.events...)
}

// WaitEvent returns the first event at index since or later of Events that
// match accepts, waiting for it within ctx; what names it in the error.
func (k *Driver) WaitEvent(ctx context.Context, what string, since int, match func(Event) bool) (Event, error) {
	for {
		k.mu.Lock()
		for i := since; i < len(k.events); i++ {
			if match(k.events[i]) {
				e := k.events[i]
				k.mu.Unlock()
				return e, nil
			}
		}
		since = len(k.events)
		changed, dead := k.changed, k.dead
		k.mu.Unlock()
		if dead != nil {
			return Event{}, fmt.Errorf("%s: waiting for %s: %w", k.name, what, dead)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Event{}, fmt.Errorf("%s: waiting for %s: got no such event; want one: %w", k.name, what, ctx.Err())
		}
	}
}

// pending is a request sent and not yet answered.
type pending struct {
	id   int
	cmd  string
	done chan struct{}
	line []byte // the reply line, once done
	err  error  // why there is no reply, once done
}

func (p *pending) deliver(line []byte, err error) {
	p.line, p.err = line, err
	close(p.done)
}

// send registers a request and writes it; a failure to write is delivered
// as the request's outcome.
func (k *Driver) send(cmd string, args map[string]any) *pending {
	k.mu.Lock()
	k.nextID++
	p := &pending{id: k.nextID, cmd: cmd, done: make(chan struct{})}
	dead := k.dead
	if dead == nil {
		k.pending[p.id] = p
	}
	k.mu.Unlock()
	if dead != nil {
		p.deliver(nil, dead)
		return p
	}
	req := map[string]any{"id": p.id, "cmd": cmd}
	for key, v := range args {
		req[key] = v
	}
	b, err := json.Marshal(req)
	if err != nil {
		k.abandon(p, fmt.Errorf("%s %s: %w", k.name, cmd, err))
		return p
	}
	k.logf("%s :invoke %s %s (#%d)", k.name, cmd, compact(args), p.id)
	k.writeMu.Lock()
	_, err = k.stdin.Write(append(b, '\n'))
	k.writeMu.Unlock()
	if err != nil {
		k.abandon(p, fmt.Errorf("%s %s: writing the request: %w", k.name, cmd, err))
	}
	return p
}

func (k *Driver) abandon(p *pending, err error) {
	k.mu.Lock()
	_, ours := k.pending[p.id]
	delete(k.pending, p.id)
	k.mu.Unlock()
	if ours {
		p.deliver(nil, err)
	}
}

// reply logs a reply line when it arrives and hands it to its request.
func (k *Driver) reply(id int, b []byte) {
	var r struct {
		OK      bool         `json:"ok"`
		Error   *RecipeError `json:"error"`
		Elapsed float64      `json:"elapsed"`
	}
	_ = json.Unmarshal(b, &r)
	k.mu.Lock()
	p := k.pending[id]
	delete(k.pending, id)
	k.mu.Unlock()
	cmd := "?"
	if p != nil {
		cmd = p.cmd
	}
	if r.OK {
		k.logf("%s :ok %s %s in %.3fs (#%d)", k.name, cmd, replyFields(b), r.Elapsed, id)
	} else if r.Error != nil {
		k.logf("%s :fail %s %s: %s %s in %.3fs (#%d)", k.name, cmd, r.Error.Class, r.Error.Message, replyFields(b), r.Elapsed, id)
	}
	if p == nil {
		k.logf("%s reply #%d matches no request sent", k.name, id)
		return
	}
	p.deliver(append([]byte(nil), b...), nil)
}

// wait decodes p's reply into out. The error is a *RecipeError when the recipe
// raised; out is decoded then too, so its Elapsed is the time to the raise.
func (k *Driver) wait(ctx context.Context, p *pending, out any) error {
	select {
	case <-p.done:
	case <-ctx.Done():
		return fmt.Errorf("%s %s (#%d): got no reply; want one before the deadline: %w", k.name, p.cmd, p.id, ctx.Err())
	}
	if p.err != nil {
		return p.err
	}
	var r struct {
		OK    bool         `json:"ok"`
		Error *RecipeError `json:"error"`
	}
	if err := json.Unmarshal(p.line, &r); err != nil {
		return fmt.Errorf("%s %s (#%d): unparsable reply %s: %w", k.name, p.cmd, p.id, p.line, err)
	}
	if out != nil {
		if err := json.Unmarshal(p.line, out); err != nil {
			return fmt.Errorf("%s %s (#%d): reply %s: %w", k.name, p.cmd, p.id, p.line, err)
		}
	}
	if !r.OK {
		if r.Error == nil {
			return fmt.Errorf("%s %s (#%d): got a failed reply without an error: %s", k.name, p.cmd, p.id, p.line)
		}
		r.Error.Driver, r.Error.Cmd = k.name, p.cmd
		return r.Error
	}
	return nil
}

func (k *Driver) call(ctx context.Context, cmd string, args map[string]any, out any) error {
	return k.wait(ctx, k.send(cmd, args), out)
}

// replyFields renders a reply without its bookkeeping, keys sorted.
func replyFields(b []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return string(b)
	}
	for _, key := range []string{"id", "cmd", "ok", "elapsed", "error"} {
		delete(m, key)
	}
	return fields(m, func(v json.RawMessage) string { return string(v) })
}

func compact(args map[string]any) string {
	return fields(args, func(v any) string { return fmt.Sprint(v) })
}

// fields renders m as "key=value" words, keys sorted, as a log line shows
// a request or a reply.
func fields[V any](m map[string]V, show func(V) string) string {
	var parts []string
	for _, key := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, key+"="+show(m[key]))
	}
	return strings.Join(parts, " ")
}

// seconds is a duration as the driver's float seconds, to the millisecond.
func seconds(d time.Duration) float64 { return d.Round(time.Millisecond).Seconds() }
