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
// /proc (Linux). It is how a test shows from outside the server that nothing
// is bound beyond loopback (claim E1).
func (s *Server) Listeners() ([]string, error) {
	if s.run == nil {
		return nil, errNoControl
	}
	pid, err := s.run.pid()
	if err != nil {
		return nil, err
	}
	socks, err := Sockets(pid)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range socks {
		if k.Listening {
			out = append(out, k.Local)
		}
	}
	return out, nil
}

// Socket is one TCP socket of a process, as /proc shows it.
type Socket struct {
	Local, Remote string // host:port
	Listening     bool
}

// Sockets returns the TCP sockets (IPv4 and IPv6) among process pid's file
// descriptors, read from /proc (Linux).
func Sockets(pid int) ([]Socket, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var out []Socket
	for _, table := range []string{"net/tcp", "net/tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/%s", pid, table))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] {
				continue
			}
			local, err1 := decodeProcAddr(fields[1])
			remote, err2 := decodeProcAddr(fields[2])
			if err1 == nil && err2 == nil {
				out = append(out, Socket{Local: local, Remote: remote, Listening: fields[3] == "0A"})
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
