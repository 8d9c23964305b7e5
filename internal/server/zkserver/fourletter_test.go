package zkserver

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// answering serves one four-letter word per connection with the answer
// answer gives, as a ZooKeeper server's client port does.
func answering(t *testing.T, answer func(word string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 4)
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadFull(c, b); err == nil {
				_, _ = io.WriteString(c, answer(string(b)))
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// TestWordTheWhitelistRefuses: a server whose 4lw.commands.whitelist leaves
// a word out answers with a sentence, not an error; FourLetter turns it
// into a NotAllowedError naming the setting, and SessionExpiry, which
// reads conf, passes it on, so a claim skips instead of parsing the
// sentence as the server's state. A word the list allows is answered.
func TestWordTheWhitelistRefuses(t *testing.T) {
	addr := answering(t, func(word string) string {
		if word == "srvr" {
			return "Zookeeper version: 3.8.0-x, built on y\nMode: standalone\n"
		}
		return word + " is not executed because it is not in the whitelist.\n"
	})
	for _, word := range []string{"wchp", "conf"} {
		_, err := FourLetter(addr, word, 5*time.Second)
		var na *NotAllowedError
		if !errors.As(err, &na) || na.Word != word || !strings.Contains(err.Error(), "4lw.commands.whitelist") {
			t.Errorf("%s: got error %v; want a NotAllowedError naming %s and 4lw.commands.whitelist", word, err, word)
		}
	}
	s := &Server{Client: addr, Label: "ext1"}
	if _, err := s.SessionExpiry(time.Second); !errors.As(err, new(*NotAllowedError)) {
		t.Errorf("SessionExpiry: got %v; want the NotAllowedError for conf", err)
	}
	if st, err := s.Srvr(); err != nil || st.Mode != "standalone" {
		t.Errorf("srvr: got %+v, %v; want the allowed word answered (Mode standalone)", st, err)
	}
}

// TestSessionExpiryReadsConf: the longest a silent session lives is the
// timeout the server grants (clamped to minSessionTimeout and
// maxSessionTimeout) plus one tickTime.
func TestSessionExpiryReadsConf(t *testing.T) {
	addr := answering(t, func(string) string {
		return "clientPort=2181\ntickTime=2000\nminSessionTimeout=4000\nmaxSessionTimeout=40000\n"
	})
	s := &Server{Client: addr, Label: "ext1"}
	for _, tc := range []struct{ ask, want time.Duration }{
		{time.Second, 6 * time.Second},       // raised to minSessionTimeout
		{10 * time.Second, 12 * time.Second}, // granted as asked
		{time.Minute, 42 * time.Second},      // lowered to maxSessionTimeout
	} {
		if got, err := s.SessionExpiry(tc.ask); err != nil || got != tc.want {
			t.Errorf("SessionExpiry(%v): got %v, %v; want %v", tc.ask, got, err, tc.want)
		}
	}
}
