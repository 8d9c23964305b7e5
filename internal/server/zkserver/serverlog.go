// This file carries a ZooKeeper server's output into a test's log, one
// call a line with the server's prefix, and keeps what a failure message or a
// claim needs of it: the last lines, and the first line holding each text a
// test watches for (LogWriter).

package zkserver

import (
	"bytes"
	"strings"
	"sync"
)

// LogWriter turns a server's byte stream into one log call per line, each
// line starting with a prefix such as "zk2| ". Logging stops after Close, so
// a late line never reaches a finished test.
type LogWriter struct {
	mu     sync.Mutex
	prefix string
	logf   func(format string, args ...any)
	buf    []byte
	closed bool
	tail   []string          // the last lines, for failure messages
	found  map[string]string // first line containing each watched text
}

const tailLines = 40

// NewLogWriter returns a LogWriter that logs each line with logf (nil: none) after prefix.
func NewLogWriter(prefix string, logf func(string, ...any)) *LogWriter {
	return &LogWriter{prefix: prefix, logf: logf}
}

// Write takes the server's bytes and logs each whole line.
func (w *LogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(string(bytes.TrimRight(w.buf[:i], "\r")))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *LogWriter) line(s string) {
	for text, first := range w.found {
		if first == "" && strings.Contains(s, text) {
			w.found[text] = s
		}
	}
	w.tail = append(w.tail, s)
	if len(w.tail) > tailLines {
		w.tail = w.tail[len(w.tail)-tailLines:]
	}
	if !w.closed && w.logf != nil {
		w.logf("%s%s", w.prefix, s)
	}
}

// Watch starts looking for text in the lines written from now on.
func (w *LogWriter) Watch(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.found == nil {
		w.found = map[string]string{}
	}
	if _, ok := w.found[text]; !ok {
		w.found[text] = ""
	}
}

// First returns the first line containing a watched text, or "".
func (w *LogWriter) First(text string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.found[text]
}

// Tail returns the last lines written.
func (w *LogWriter) Tail() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.tail...)
}

// Close flushes a partial line and stops forwarding to logf.
func (w *LogWriter) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.line(string(w.buf))
		w.buf = nil
	}
	w.closed = true
}
