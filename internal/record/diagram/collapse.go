package diagram

import "fmt"

// collapse draws a run of identical steps once, with their number: a step
// repeated in a row, or a request and its answer repeated in a row (a poll).
func collapse(evs []event) []event {
	var out []event
	for i := 0; i < len(evs); {
		size, n := 1, repeats(evs, i, 1)
		if n == 1 {
			if m := repeats(evs, i, 2); m > 1 {
				size, n = 2, m
			}
		}
		for _, e := range evs[i : i+size] {
			if n > 1 {
				e.times = n
			}
			out = append(out, e)
		}
		i += size * n
	}
	return out
}

// repeats counts how many times the block evs[i:i+size] occurs in a row
// from i.
func repeats(evs []event, i, size int) int {
	if i+size > len(evs) {
		return 1
	}
	n := 1
	for j := i + size; j+size <= len(evs) && sameBlock(evs[i:i+size], evs[j:j+size]); j += size {
		n++
	}
	return n
}

func sameBlock(a, b []event) bool {
	for k := range a {
		if a[k].kind != b[k].kind || a[k].from != b[k].from || a[k].to != b[k].to || a[k].text != b[k].text {
			return false
		}
	}
	return true
}

// priority says what a diagram over its size keeps first: faults, phases,
// evidence and remarks (the test's own observations) always, then the
// messages in order, then the notes in order.
func priority(k kind) int {
	switch k {
	case fault, phase, proof, remark, elapsed:
		return 0
	case call, reply, lost, signal:
		return 1
	}
	return 2
}

// limit keeps at most maxMessages arrows and maxEvents steps in all (one
// of them the note that says how many were left out), choosing by
// priority and keeping the order.
func limit(evs []event) ([]event, int) {
	keep := make([]bool, len(evs))
	kept, arrows := 0, 0
	for level := 0; level <= 2; level++ {
		for i, e := range evs {
			switch {
			case priority(e.kind) != level || kept >= maxEvents-1:
			case level == 1 && arrows >= maxMessages:
			default:
				keep[i] = true
				kept++
				arrows += level & 1
			}
		}
	}
	if kept == len(evs) || len(evs) <= maxEvents && arrows == countArrows(evs) {
		return evs, 0
	}
	var out []event
	omitted := len(evs) - kept
	for i, e := range evs {
		if !keep[i] && omitted > 0 {
			out = append(out, event{kind: remark, text: fmt.Sprintf("(%d more steps of the log are not drawn from here on)", omitted)})
			omitted = -omitted
		}
		if keep[i] {
			out = append(out, e)
		}
	}
	return out, -omitted
}

func countArrows(evs []event) int {
	n := 0
	for _, e := range evs {
		if priority(e.kind) == 1 {
			n++
		}
	}
	return n
}
