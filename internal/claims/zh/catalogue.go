// Package zh is the Chinese of every format a proof states (an
// observation, a failure line), keyed by the English format: the message
// catalogue of EVIDENCE.zh.md, in the article's terms.
package zh

import "fmt"

// Of formats args with the Chinese of format (observations, then
// failures); ok is false when the catalogue has none.
func Of(format string, args ...any) (s string, ok bool) {
	zh, ok := observations[format]
	if !ok {
		zh, ok = failures[format]
	}
	if !ok {
		return "", false
	}
	return fmt.Sprintf(zh, args...), true
}
