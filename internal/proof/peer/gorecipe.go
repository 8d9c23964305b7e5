package peer

import (
	"fmt"
	"strings"
)

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
