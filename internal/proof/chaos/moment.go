package chaos

import (
	"fmt"

	"github.com/zk19/zk19/fence"
)

// Moment is what a frozen worker sees just before it writes: whether its
// node is gone (as the observer O sees it) and whether every fenced
// resource holds a token above its own. Both only ever become true (a
// sequential node once deleted does not come back; a fenced mark never
// goes down), so what holds just before the write holds when it is made.
type Moment struct {
	Node    string        `json:"node"`
	Gone    bool          `json:"gone"`
	Err     string        `json:"err,omitempty"` // of the Exists or a resource's read, when one failed
	Marks   []fence.Token `json:"marks"`         // of the fenced resources, in the order of the resources
	Above   bool          `json:"above"`         // every fenced mark above the token
	Checked bool          `json:"checked"`
}

// Stale reports whether a write made at m is stale-late.
func (m Moment) Stale() bool { return m.Checked && m.Err == "" && m.Gone && m.Above }

func (m Moment) String() string {
	node := "its node " + m.Node + " was still on the server"
	switch {
	case m.Err != "":
		node = fmt.Sprintf("whether its node %s was gone is unknown (%v)", m.Node, m.Err)
	case m.Gone:
		node = "its node " + m.Node + " was gone"
	}
	higher := "a higher token had been accepted by every fenced resource"
	if !m.Above {
		higher = "no higher token had been accepted by every fenced resource"
	}
	return fmt.Sprintf("%s and %s (fenced marks %v)", node, higher, m.Marks)
}
