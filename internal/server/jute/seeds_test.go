package jute

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// seedDir holds real frames captured from a ZooKeeper 3.8.0 session.
const seedDir = "../../../testdata/jute"

// loadSeeds returns every captured frame (length prefix included), keyed by
// file name without ".bin".
func loadSeeds(tb testing.TB) map[string][]byte {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(seedDir, "*.bin"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(paths) == 0 {
		tb.Fatalf("no seed frames in %s", seedDir)
	}
	seeds := make(map[string][]byte, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		seeds[strings.TrimSuffix(filepath.Base(p), ".bin")] = b
	}
	return seeds
}

// sortedNames returns the seed names in a stable order.
func sortedNames(seeds map[string][]byte) []string {
	names := make([]string, 0, len(seeds))
	for n := range seeds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// isRequestSeed reports whether the named seed is a client request that
// carries a RequestHeader (the handshake does not).
func isRequestSeed(name string) bool {
	return strings.HasSuffix(name, "-request") && !strings.HasPrefix(name, "handshake")
}

// isReplySeed reports whether the named seed is a server frame that carries
// a ReplyHeader (the handshake reply does not).
func isReplySeed(name string) bool {
	return (strings.HasSuffix(name, "-reply") && !strings.HasPrefix(name, "handshake")) || name == "notification"
}
