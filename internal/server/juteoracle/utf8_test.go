package juteoracle

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zk19/zk19/internal/server/jute"
)

// TestJavaStringReadsAsTheJDKDoes sweeps the malformed UTF-8 sequences
// around every boundary of the JDK's decoder through the official
// CreateRequest, so that javaString, which the comparison relies on for
// paths that are not UTF-8, is checked beyond what the fuzzer happens to
// reach: each sample is a path on its own (cut short by the end of input)
// and followed by a byte.
func TestJavaStringReadsAsTheJDKDoes(t *testing.T) {
	o := StartResolved(t)
	var k *Kind
	for i := range Kinds {
		if Kinds[i].Class == "org.apache.zookeeper.proto.CreateRequest" {
			k = &Kinds[i]
		}
	}
	invalid := 0
	for _, s := range utf8Samples() {
		for _, path := range []string{s, s + "z"} {
			body := jute.CreateRequest{Path: path, Flags: 1}.Append(nil)
			r, err := o.CheckBytes(k, body)
			if err != nil {
				t.Fatalf("path % x: %v", path, err)
			}
			if !utf8.ValidString(path) {
				invalid++
				if !strings.Contains(r.Note, "non-UTF-8") {
					t.Fatalf("path % x is not UTF-8, yet the check notes %q", path, r.Note)
				}
			}
		}
	}
	t.Logf("%d paths that are not UTF-8 read by the JVM as javaString says", invalid)
}

// utf8Samples returns every one- and two-byte sequence of bytes on the
// decoder's boundaries, the three-byte ones after the leads whose second
// byte is restricted, and four-byte ones after the four-byte leads.
func utf8Samples() []string {
	edges := []byte{0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf,
		0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xff}
	var out []string
	for _, a := range edges {
		out = append(out, string([]byte{a}))
		for _, b := range edges {
			out = append(out, string([]byte{a, b}))
		}
	}
	for _, a := range []byte{0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5} {
		for _, b := range edges {
			for _, c := range edges {
				out = append(out, string([]byte{a, b, c}))
			}
		}
	}
	for _, a := range []byte{0xf0, 0xf1, 0xf4} {
		for _, b := range []byte{0x41, 0x80, 0x8f, 0x90, 0xbf, 0xc2} {
			for _, c := range []byte{0x41, 0x80, 0xbf} {
				for _, d := range []byte{0x41, 0x80, 0xed} {
					out = append(out, string([]byte{a, b, c, d}))
				}
			}
		}
	}
	return out
}
