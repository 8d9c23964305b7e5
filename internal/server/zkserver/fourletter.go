package zkserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// FourLetter sends a four-letter word (srvr, conf, wchc, wchp, ...) to addr
// and returns the server's whole answer. The exchange is bounded by timeout.
func FourLetter(addr, word string, timeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, word); err != nil {
		return "", fmt.Errorf("%s to %s: %w", word, addr, err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return string(b), fmt.Errorf("%s from %s: %w", word, addr, err)
	}
	if strings.Contains(string(b), notAllowedAnswer) {
		return string(b), &NotAllowedError{Word: word, Addr: addr}
	}
	return string(b), nil
}

// notAllowedAnswer is how a server (3.5.3 and later) answers a four-letter
// word its 4lw.commands.whitelist leaves out; the default list has srvr
// only. The harness's own servers allow every word.
const notAllowedAnswer = "is not executed because it is not in the whitelist"

// NotAllowedError is a four-letter word the server refuses to run.
type NotAllowedError struct{ Word, Addr string }

func (e *NotAllowedError) Error() string {
	return fmt.Sprintf("the server at %s does not run %s: add it to 4lw.commands.whitelist", e.Addr, e.Word)
}

// Fields parses "Key: value" and "key=value" lines of a four-letter answer.
func Fields(answer string) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(answer))
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ": "); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		} else if k, v, ok := strings.Cut(line, "="); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// Srvr is what the srvr four-letter word says about a server.
type Srvr struct {
	Version string // "3.8.0", without the build suffix
	Full    string // the whole "Zookeeper version" line
	Mode    string // "standalone", "leader" or "follower"
	Zxid    int64
}

// parseSrvr reads the answer to srvr.
func parseSrvr(answer string) (Srvr, error) {
	f := Fields(answer)
	full, ok := f["Zookeeper version"]
	if !ok {
		return Srvr{}, fmt.Errorf("srvr: no version in %q", firstLine(answer))
	}
	v := full
	if i := strings.IndexAny(v, "-, "); i > 0 {
		v = v[:i]
	}
	s := Srvr{Version: v, Full: full, Mode: f["Mode"]}
	if z, ok := f["Zxid"]; ok {
		_, _ = fmt.Sscanf(z, "0x%x", &s.Zxid)
	}
	if s.Mode == "" {
		return s, fmt.Errorf("srvr: no Mode yet (%q)", firstLine(answer))
	}
	return s, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
