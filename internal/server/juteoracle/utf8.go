package juteoracle

import (
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// javaString returns the string the server holds for a ustring whose bytes
// are s: BinaryInputArchive.readString is new String(bytes, UTF_8), which
// replaces each malformed sequence with one U+FFFD, where the Go codec keeps
// the bytes as they came. For valid UTF-8 the two agree; for the rest the
// server's PathUtils refuses the path (U+FFFD is among the characters it
// rejects), but the proxy and the server still see different strings, and
// the comparison must know which. The fuzz target checks this function
// against the JVM on every input it makes.
func javaString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if r, n := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || n > 1 {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteRune(utf8.RuneError)
		i += malformedLen(s[i:])
	}
	return b.String()
}

func isCont(c byte) bool { return c&0xc0 == 0x80 }

// malformedLen is how many bytes, at the start of s, the JDK's UTF-8 string
// decoder (String.decodeUTF8_UTF16) replaces with one U+FFFD. s starts with
// a malformed sequence. A sequence cut short by the end of input is replaced
// whole once its prefix is well-formed.
func malformedLen(s string) int {
	b1 := s[0]
	switch {
	case b1 >= 0xc2 && b1 <= 0xdf:
		return 1 // the next byte is not a continuation, or there is none
	case b1 >= 0xe0 && b1 <= 0xef:
		return malformed3(s)
	case b1 >= 0xf0 && b1 <= 0xf7:
		return malformed4(s)
	}
	return 1
}

func malformed3(s string) int {
	b1 := s[0]
	bad2 := len(s) > 1 && ((b1 == 0xe0 && s[1]&0xe0 == 0x80) || !isCont(s[1]))
	switch {
	case len(s) >= 3 && bad2:
		return 1
	case len(s) >= 3 && isCont(s[2]):
		return 3 // well-formed but a surrogate
	case len(s) >= 3:
		return 2
	case bad2:
		return 1
	}
	return len(s) // cut short by the end of input
}

func malformed4(s string) int {
	b1 := s[0]
	bad2 := len(s) > 1 && ((b1 == 0xf0 && (s[1] < 0x90 || s[1] > 0xbf)) ||
		(b1 == 0xf4 && s[1]&0xf0 != 0x80) || !isCont(s[1]))
	switch {
	case b1 > 0xf4 || bad2:
		return 1
	case len(s) >= 3 && !isCont(s[2]):
		return 2
	case len(s) >= 4:
		return 3 // the fourth byte is not a continuation
	}
	return len(s) // cut short by the end of input
}

// cesu8 encodes s as ZooKeeper 3.8's BinaryOutputArchive.writeString does:
// UTF-8 for each UTF-16 unit, so a character outside the BMP becomes two
// three-byte surrogate encodings.
func cesu8(s string) string {
	var b []byte
	for _, r := range s {
		if r <= 0xffff {
			b = utf8.AppendRune(b, r)
			continue
		}
		hi, lo := utf16.EncodeRune(r)
		for _, u := range []rune{hi, lo} {
			b = append(b, byte(0xe0|u>>12), byte(0x80|(u>>6)&0x3f), byte(0x80|u&0x3f))
		}
	}
	return string(b)
}

// cesuView returns a copy of v with every string in CESU-8.
func cesuView(v reflect.Value) reflect.Value { return mapStrings(v, cesu8) }
