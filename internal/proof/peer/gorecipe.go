package peer

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"
)

// GoRecipe is a lock recipe written in Go, to be put through the peer
// scenarios (the root package's TestPeer… tests) beside ours,
// go-zookeeper's, kazoo's and Curator's, as a column of the table "How
// other recipes fare". Register it from a test file of the root package:
//
//	func init() { peer.Register("mylock", myRecipe{}) }
type GoRecipe interface {
	// NodeName is the name the recipe gives a contender's node before the
	// server's sequence suffix, for a GUID of 32 hex digits: the scenarios
	// plant nodes named so, to look like the recipe's own.
	NodeName(guid string) string
	// NewLock makes the recipe's lock object on dir for one contender. conn
	// is the contender's own session, through its own fault proxy; the
	// scenario closes it.
	NewLock(conn *zk.Conn, dir string) GoLock
}

// GoLock is one contender's lock object.
type GoLock interface {
	// Acquire returns once it holds (with the path or name of the node it
	// holds, "" if it does not say), fails, or ctx ends: ctx carries the
	// scenario's timeout and its cancel.
	Acquire(ctx context.Context) (node string, err error)
	// Release gives up the hold.
	Release(ctx context.Context) error
	// Held is the lock object's own account of whether it holds now.
	Held() bool
}

// Registration is a registered Go recipe.
type Registration struct {
	Name   string
	Recipe GoRecipe
}

var (
	registryMu sync.Mutex
	registry   []Registration
)

// Register adds a Go recipe as a column named name (no spaces, no '|').
// It panics on a name registered twice, as a duplicate column would hide
// one of them.
func Register(name string, r GoRecipe) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, g := range registry {
		if g.Name == name {
			panic(fmt.Sprintf("peer.Register: %q registered twice", name))
		}
	}
	registry = append(registry, Registration{name, r})
}

// Registered returns the registered Go recipes, in the order of Register.
func Registered() []Registration {
	registryMu.Lock()
	defer registryMu.Unlock()
	return append([]Registration(nil), registry...)
}

// EnvPeers names more drivers, each a column of the peer table:
// "name=command", several separated by ";". The command is run by /bin/sh
// from the module root, once per contender, and speaks
// testdata/peers/PROTOCOL.md.
const EnvPeers = "ZK19_PEERS"

// EnvDriver is one driver of ZK19_PEERS.
type EnvDriver struct {
	Name    string
	Command string
}

// Config is the Config that starts d for contender name.
func (d EnvDriver) Config(name string) Config {
	return Config{Command: []string{"/bin/sh", "-c", "exec " + d.Command}, Name: name,
		Install: fmt.Sprintf("see %s (%s=%s)", EnvPeers, d.Name, d.Command)}
}

// ParseEnv parses the value of ZK19_PEERS.
func ParseEnv(v string) ([]EnvDriver, error) {
	var out []EnvDriver
	for _, entry := range strings.Split(v, ";") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		name, command, ok := strings.Cut(entry, "=")
		name, command = strings.TrimSpace(name), strings.TrimSpace(command)
		if !ok || name == "" || command == "" || strings.ContainsAny(name, " |") {
			return nil, fmt.Errorf("%s: got %q; want name=command (a name without spaces or '|'), several separated by ';'", EnvPeers, entry)
		}
		out = append(out, EnvDriver{name, command})
	}
	return out, nil
}
