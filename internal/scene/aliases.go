package scene

import "github.com/zk19/zk19/internal/harness"

// The harness's names that ./peers still calls through this package. They
// are internal/harness's own; peers imports that package in a change of
// its own (it is being edited elsewhere), and then these go.
const (
	Within               = harness.Within
	ExpirySessionTimeout = harness.ExpirySessionTimeout
)

// Returned is harness.Returned.
type Returned = harness.Returned

var (
	ExpiryServer    = harness.ExpiryServer
	InParallel      = harness.InParallel
	KitMain         = harness.KitMain
	Parallel        = harness.Parallel
	ParseWatchTable = harness.ParseWatchTable
	SharedServer    = harness.SharedServer
	TestRoot        = harness.TestRoot
	WatchTable      = harness.WatchTable
)
