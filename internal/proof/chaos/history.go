package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/history"
)

// History is what one setup of a C1 run recorded, as plain data: what the
// run saw, in the order it saw it, and nothing of what that means. The
// Checker judges it; JSON holds it (testdata/ keeps histories the
// Checker's tests judge offline).
type History struct {
	Seed  int64   `json:"seed"`
	Setup zh.Text `json:"setup"` // the setup's name, in both languages
	// Ended is false when the run stopped before its end (a setup step
	// failed and the run says so itself): then only Events were recorded,
	// and only they are judged.
	Ended bool `json:"ended"`
	// Events are the read-backs of holds and the writes of frozen
	// holders, in the order the run recorded them.
	Events []Event `json:"events"`
	// NotStopped: the workers did not end their cycles within StopWithin
	// of the stop.
	NotStopped bool          `json:"not_stopped,omitempty"`
	StopWithin time.Duration `json:"stop_within,omitempty"`
	// Unclosed are the workers' sessions that did not close.
	Unclosed []Unclosed `json:"unclosed,omitempty"`
	// NodesLeft and SessionsLeft say what was left on the server after
	// every worker closed: the failed wait's last state, "" for nothing.
	// Sessions are looked for only once no node is left.
	NodesLeft    string `json:"nodes_left,omitempty"`
	SessionsLeft string `json:"sessions_left,omitempty"`
	// Resources are what each resource accepted and, for a fenced one,
	// its register history, in the order the workers write to them.
	Resources []ResourceHistory `json:"resources"`
	// Anomalies broke the run's bookkeeping: a resource's I/O error, a
	// hold not read back, a create recovered ambiguously.
	Anomalies []string `json:"anomalies,omitempty"`
}

// Event is one thing the run saw during the schedule: exactly one field
// is set.
type Event struct {
	ReadBack    *HoldReadBack `json:"read_back,omitempty"`
	FrozenWrite *FrozenWrite  `json:"frozen_write,omitempty"`
}

// HoldReadBack is a listing of the lock parent that the observer O took after
// a hold began (Read says why it shows the server as it was then).
type HoldReadBack struct {
	Hold   Hold          `json:"hold"`
	Others []Hold        `json:"others,omitempty"` // the holds it overlapped, from the lock's view
	Seen   Seen          `json:"seen"`
	How    string        `json:"how"` // how O took the listing: after a sync, or after a write of its own
	At     time.Duration `json:"at"`  // when, from the setup's start
	// Owners says, for an overlapped hold whose node was listed while the
	// hold's own was too, who owned both nodes as O read them then: the
	// overlapped hold's first, the hold's own second.
	Owners map[int][2]string `json:"owners,omitempty"`
}

// FrozenWrite is what a holder frozen by the nemesis did once its gate
// opened: the fault that froze it, its token, what it saw just before it
// wrote, and every resource's answer.
type FrozenWrite struct {
	Fault  int           `json:"fault"` // the fault's place in the schedule
	Kind   Kind          `json:"kind"`
	Worker string        `json:"worker"`
	Token  fence.Token   `json:"token"`
	Moment Moment        `json:"moment"`
	Writes []WriteAnswer `json:"writes"` // in the order of History.Resources
}

// Answers lists every resource's answer: "memory accepted=false (mark
// g0/9), ...".
func (fw FrozenWrite) Answers() string {
	var parts []string
	for _, w := range fw.Writes {
		parts = append(parts, fmt.Sprintf("%s accepted=%v (mark %v)", w.Resource, w.Accepted, w.Mark))
	}
	return strings.Join(parts, ", ")
}

// WriteAnswer is one resource's answer to a write.
type WriteAnswer struct {
	Resource string      `json:"resource"`
	Fenced   bool        `json:"fenced"`
	Accepted bool        `json:"accepted"`
	Mark     fence.Token `json:"mark"`
}

// Unclosed is a worker's session that did not close.
type Unclosed struct {
	Worker string `json:"worker"`
	Err    string `json:"err"`
}

// ResourceHistory is one resource's record: the writes it accepted, with
// the commit number it gave each, and, for a fenced one, its register
// history (a refused write is a read of the value it saw).
type ResourceHistory struct {
	Name     string       `json:"name"`
	Fenced   bool         `json:"fenced"`
	Accepted []Accepted   `json:"accepted"`
	Initial  string       `json:"initial,omitempty"`
	Ops      []RegisterOp `json:"ops,omitempty"`
}

// Accepted is a write a resource accepted.
type Accepted struct {
	Commit uint64      `json:"commit"`
	Who    string      `json:"who"`
	Token  fence.Token `json:"token"`
}

// RegisterOp is one operation of a register history, as porcupine takes
// it: an unknown outcome returns at the largest time.
type RegisterOp struct {
	Client int            `json:"client"`
	Input  history.Input  `json:"input"`
	Output history.Output `json:"output"`
	Call   int64          `json:"call"`
	Return int64          `json:"return"`
}

// registerOps turns a recorder's operations into RegisterOps.
func registerOps(ops []porcupine.Operation) []RegisterOp {
	out := make([]RegisterOp, 0, len(ops))
	for _, op := range ops {
		in, _ := op.Input.(history.Input)
		res, _ := op.Output.(history.Output)
		out = append(out, RegisterOp{Client: op.ClientId, Input: in, Output: res, Call: op.Call, Return: op.Return})
	}
	return out
}

// operations is ops as porcupine takes them.
func operations(ops []RegisterOp) []porcupine.Operation {
	out := make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		out = append(out, porcupine.Operation{ClientId: op.Client, Input: op.Input, Output: op.Output, Call: op.Call, Return: op.Return})
	}
	return out
}

// EnvHistory names a directory where a run saves each setup's history as
// JSON (c1-<seed>-<setup>.json), to judge it again offline.
const EnvHistory = "ZK19_CHAOS_HISTORY"

// save writes h to EnvHistory's directory, when it is set, and returns
// the file's path ("" when unset).
func (h History) save() (string, error) {
	dir := os.Getenv(EnvHistory)
	if dir == "" {
		return "", nil
	}
	b, err := json.MarshalIndent(h, "", " ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := filepath.Join(dir, fmt.Sprintf("c1-%d-%s.json", h.Seed, strings.ReplaceAll(h.Setup.En, " ", "-")))
	return name, os.WriteFile(name, b, 0o644)
}

// LoadHistory reads a history saved as JSON.
func LoadHistory(path string) (History, error) {
	var h History
	b, err := os.ReadFile(path)
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}
