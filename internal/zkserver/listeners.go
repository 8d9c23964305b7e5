package zkserver

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Listeners returns the addresses the server's process listens on, read from
// /proc (Linux): the sockets among the process's file descriptors that are in
// LISTEN state. It is how a test shows from outside the server that nothing
// is bound beyond loopback (claim E1).
func (s *Server) Listeners() ([]string, error) {
	if s.run == nil {
		return nil, errNoControl
	}
	pid, err := s.run.pid()
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"net/tcp", "net/tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/%s", pid, table))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			if a, err := decodeProcAddr(fields[1]); err == nil {
				out = append(out, a)
			}
		}
		f.Close()
	}
	return out, nil
}

// decodeProcAddr turns /proc/net/tcp's "0100007F:1F90" into "127.0.0.1:8080".
func decodeProcAddr(s string) (string, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("bad address %q", s)
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return "", err
	}
	// Each 32-bit word is in host (little-endian) order.
	for i := 0; i+4 <= len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(net.IP(b).String(), strconv.Itoa(int(port))), nil
}
