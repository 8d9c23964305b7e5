// Package zh is the Chinese of every format a proof states (an
// observation, a failure line, a peer cell, a skip reason, a summary's
// words), keyed by the English format: the message catalogue of
// EVIDENCE.zh.md, in the article's terms.
package zh

import (
	"fmt"
	"strings"
)

// Of formats args with the Chinese of format, an observation's or a
// failure line's; ok is false when the catalogue has none. A Text, or any
// other Chinese, among the args is given in its Chinese.
func Of(format string, args ...any) (s string, ok bool) {
	zh, ok := observations[format]
	if !ok {
		zh, ok = failures[format]
	}
	if !ok {
		return "", false
	}
	return fmt.Sprintf(zh, chinese(args)...), true
}

// Text is a piece of what a proof states in both languages: fmt prints it
// as its English (String), and Of puts its Chinese in the Chinese, so a
// Text passed to Evidence or Say reads right in both.
type Text struct{ En, Zh string }

func (t Text) String() string { return t.En }

// Chinese is t's Chinese.
func (t Text) Chinese() string { return t.Zh }

// A Chinese is a value a proof states that has words of its own: fmt
// prints its English (String), and Of and Say put its Chinese in the
// Chinese (a porcupine verdict, where a write was found).
type Chinese interface {
	fmt.Stringer
	Chinese() string
}

// Said is a Text kept in one string, for a result its callers compare
// with "" (none to say): fmt prints its English, and Of and Say put its
// Chinese in the Chinese. Its zero value says nothing in both.
type Said string

// saidSep divides a Said's English from its Chinese.
const saidSep = "\x00"

// Said is t kept in one string.
func (t Text) Said() Said {
	if t.En == "" {
		return ""
	}
	return Said(t.En + saidSep + t.Zh)
}

func (s Said) String() string { en, _, _ := strings.Cut(string(s), saidSep); return en }

// Chinese is s's Chinese.
func (s Said) Chinese() string {
	if _, zh, ok := strings.Cut(string(s), saidSep); ok {
		return zh
	}
	return string(s)
}

// Say formats args with format in English and, from the catalogue's
// phrases, in Chinese. Its format is a literal, or a parameter of a
// function that passes it on to Say, whose every call passes a literal:
// each has an entry in phrases (TestEveryObservationHasItsChinese).
// Without one, the Chinese is the English.
func Say(format string, args ...any) Text {
	en := fmt.Sprintf(format, args...)
	if zh, ok := phrases[format]; ok {
		return Text{en, fmt.Sprintf(zh, chinese(args)...)}
	}
	return Text{en, en}
}

// Map is f applied to the English and to the Chinese of t.
func (t Text) Map(f func(string) string) Text { return Text{f(t.En), f(t.Zh)} }

// Join joins texts with sep, which is given in both languages.
func Join(texts []Text, sep Text) Text {
	var out Text
	for i, t := range texts {
		if i > 0 {
			out.En, out.Zh = out.En+sep.En, out.Zh+sep.Zh
		}
		out.En, out.Zh = out.En+t.En, out.Zh+t.Zh
	}
	return out
}

// chinese is args with every Chinese in its Chinese.
func chinese(args []any) []any {
	out := args
	for i, a := range args {
		c, ok := a.(Chinese)
		if !ok {
			continue
		}
		if &out[0] == &args[0] {
			out = append([]any(nil), args...)
		}
		out[i] = c.Chinese()
	}
	return out
}

// Entries are every Chinese format of the catalogue (observations,
// failure lines, phrases), keyed by the catalogue's name and the English:
// what the checks of the article's words read.
func Entries() map[string]string {
	out := map[string]string{}
	for name, m := range map[string]map[string]string{"observations": observations, "failures": failures, "phrases": phrases} {
		for en, zh := range m {
			out[name+" "+fmt.Sprintf("%q", en)] = zh
		}
	}
	return out
}
