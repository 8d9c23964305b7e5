package diagram

import (
	"fmt"
	"strings"
)

// mermaidArrows are the arrows of the kinds drawn as messages.
var mermaidArrows = map[kind]string{call: "->>", reply: "-->>", lost: "--x", signal: "-)"}

// renderMermaid writes a sequenceDiagram: participants in role order,
// messages as arrows, faults and notes over their participant, phases,
// remarks and evidence over the whole width.
func renderMermaid(t *trace) string {
	var b strings.Builder
	if t.title != "" {
		fmt.Fprintf(&b, "---\ntitle: %q\n---\n", t.title)
	}
	b.WriteString("sequenceDiagram\n")
	for _, p := range t.parts {
		if p.id == p.label {
			fmt.Fprintf(&b, "    participant %s\n", p.id)
		} else {
			fmt.Fprintf(&b, "    participant %s as %s\n", p.id, mermaidText([]string{p.label}))
		}
	}
	for _, e := range t.events {
		text := mermaidText(label(e))
		if arrow, ok := mermaidArrows[e.kind]; ok {
			fmt.Fprintf(&b, "    %s%s%s: %s\n", t.part(e.from).id, arrow, t.part(e.to).id, text)
			continue
		}
		fmt.Fprintf(&b, "    Note over %s: %s\n", mermaidSpan(t, e), text)
	}
	return b.String()
}

// mermaidSpan is what a note stands over: its participant, or the whole
// width.
func mermaidSpan(t *trace, e event) string {
	if e.from != "" {
		return t.part(e.from).id
	}
	if len(t.parts) == 0 {
		return "ZooKeeper"
	}
	first, last := t.parts[0].id, t.parts[len(t.parts)-1].id
	if first == last {
		return first
	}
	return first + "," + last
}

// mermaidEscape replaces, with Mermaid's entity codes, what its sequence
// grammar reads as syntax in a message: ";" ends a statement, "#" and "%%"
// open comments, "<" and ">" open HTML.
var mermaidEscape = strings.NewReplacer("#", "#35;", ";", "#59;", "%", "#37;", "<", "#60;", ">", "#62;")

func mermaidText(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = mermaidEscape.Replace(l)
	}
	return strings.Join(out, "<br/>")
}
