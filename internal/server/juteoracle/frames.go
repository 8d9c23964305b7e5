package juteoracle

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zk19/zk19/internal/server/jute"
)

// Frame is one real frame captured from a ZooKeeper session
// (testdata/jute/README.md says how).
type Frame struct {
	Name       string // file name without .bin
	FromClient bool   // client -> server
	First      bool   // the session handshake, which the proxy never parses
	Payload    []byte // after the length prefix
}

// LoadFrames reads every captured frame in dir through jute.ReadFrame, the
// reader the proxy uses, in name order. A file that is not exactly one
// frame is an error.
func LoadFrames(dir string) ([]Frame, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.bin"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no captured frames in %s", dir)
	}
	sort.Strings(paths)
	frames := make([]Frame, 0, len(paths))
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		r := bytes.NewReader(raw)
		payload, err := jute.ReadFrame(r, 0)
		if err != nil || r.Len() != 0 {
			return nil, fmt.Errorf("%s: not one frame: %v, %d bytes left", p, err, r.Len())
		}
		name := strings.TrimSuffix(filepath.Base(p), ".bin")
		frames = append(frames, Frame{
			Name:       name,
			FromClient: strings.HasSuffix(name, "-request"),
			First:      strings.HasPrefix(name, "handshake-"),
			Payload:    payload,
		})
	}
	return frames, nil
}
