// This file is which TCP ports of this host a zk19 run uses, and
// how: it draws the loopback ports the harness's servers bind (FreePort),
// tells how a port in use came to be (RunTimePort), and reads the TCP
// sockets a process holds from /proc (Sockets), which is how claim E1
// shows from outside a server what it binds.

package zkserver

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	portMu   sync.Mutex
	portUsed = map[int]bool{}
	portRNG  = rand.New(rand.NewSource(time.Now().UnixNano()))
)

// ephemeralLow is the start of the kernel's ephemeral port range.
func ephemeralLow() int {
	low, _ := ephemeralRange()
	return low
}

// ephemeralRange is the kernel's ephemeral port range, both ends included
// (Linux's default where /proc does not say).
func ephemeralRange() (low, high int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			l, err1 := strconv.Atoi(f[0])
			h, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil {
				return l, h
			}
		}
	}
	return 32768, 60999
}

// RunTimePort says how port came to be used in this run: "drawn" if
// FreePort handed it out to a server, "kernel" if it lies in the kernel's
// ephemeral range (a listener bound to port 0, such as every proxy, or the
// local end of an outgoing connection); "" for any other port, such as one
// written into a config by hand (claim E1).
func RunTimePort(port int) string {
	portMu.Lock()
	drawn := portUsed[port]
	portMu.Unlock()
	low, high := ephemeralRange()
	switch {
	case drawn:
		return "drawn"
	case port >= low && port <= high:
		return "kernel"
	}
	return ""
}

// FreePort picks an unused loopback port for a server to bind, chosen at
// random below the kernel's ephemeral range: the kernel never hands such a
// port to a proxy listening on port 0 or to an outgoing connection, so the
// port is still free when the server binds it a moment later. It never hands
// the same port out twice in one test binary.
func FreePort() (int, error) {
	portMu.Lock()
	defer portMu.Unlock()
	high := ephemeralLow()
	low := max(high-20000, 10000)
	if high-low < 1000 {
		low, high = 10000, 32768
	}
	for i := 0; i < 200; i++ {
		p := low + portRNG.Intn(high-low)
		if portUsed[p] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		_ = l.Close()
		portUsed[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("no free loopback port in [%d, %d) after 200 tries", low, high)
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
			local, err1 := DecodeProcAddr(fields[1])
			remote, err2 := DecodeProcAddr(fields[2])
			if err1 == nil && err2 == nil {
				out = append(out, Socket{Local: local, Remote: remote, Listening: fields[3] == "0A"})
			}
		}
		f.Close()
	}
	return out, nil
}

// DecodeProcAddr turns /proc/net/tcp's "0100007F:1F90" into "127.0.0.1:8080".
func DecodeProcAddr(s string) (string, error) {
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
