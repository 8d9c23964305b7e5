package chaos

import (
	"time"

	"github.com/zk19/zk19/internal/proof/claims/zh"
)

const (
	// ChaosWorkers is how many workers take the lock.
	ChaosWorkers = 5
	// chaosPauseMax bounds a worker's GC pause between taking its token and
	// writing. Short pauses keep the lock busy; the long pause of the
	// stale-late case is the nemesis's freeze, not a drawn one.
	chaosPauseMax = 25 * time.Millisecond

	chaosFaultWithin    = 10 * time.Second // a fault to find its request or holder
	chaosProgressWithin = 30 * time.Second // the lock to move on after a fault
	chaosAcquireWithin  = 30 * time.Second // one acquisition, recovery included
	chaosServerWithin   = 30 * time.Second // a server to come back, a leader to be elected
	chaosStopWithin     = 30 * time.Second // the workers to end their cycles
	chaosTraceLines     = 60               // trace lines kept of one eventful cycle
)

// chaosSetup is where a chaos run runs: one server or an ensemble, both
// with a small tickTime, so that a frozen holder's session expires within
// seconds.
type chaosSetup struct {
	Name    zh.Text // its subtest's name (Name.En) and its summary's column
	servers int
}

var ChaosSetups = []chaosSetup{{zh.Say("on one server"), 1}, {zh.Say("on three servers"), 3}}

// The resources every worker writes to, in this order.
const (
	ResMemory   = "memory"
	ResDurable  = "durable"
	ResPostgres = "postgres"
	ResControl  = "control"
)

// resourceNames are the resources' names in both languages.
var resourceNames = map[string]zh.Text{
	ResMemory: zh.Say("memory"), ResDurable: zh.Say("durable"), ResPostgres: zh.Say("postgres"), ResControl: zh.Say("control"),
}

// resourceName is resource's name in both languages.
func resourceName(resource string) zh.Text {
	if n, ok := resourceNames[resource]; ok {
		return n
	}
	return zh.Text{En: resource, Zh: resource}
}
