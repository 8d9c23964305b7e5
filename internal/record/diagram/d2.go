package diagram

import (
	"fmt"
	"strings"
)

// d2Styles are the edge and note styles by kind; what is not here is drawn
// plain.
var d2Styles = map[kind]string{
	reply:   "{style.stroke-dash: 3}",
	lost:    `{style.stroke-dash: 3; style.stroke: "#c0392b"; target-arrowhead.shape: cross}`,
	signal:  "{target-arrowhead.shape: arrow}",
	fault:   `{style.fill: "#fde2e2"; style.stroke: "#c0392b"}`,
	remark:  `{style.fill: "#eef2f7"}`,
	elapsed: `{style.fill: "#dff0fb"; style.stroke: "#2e86c1"}`,
	proof:   `{style.fill: "#fff3b0"; style.stroke: "#b7950b"; style.bold: true}`,
	phase:   `{style.fill: "#eef2f7"; style.italic: true}`,
}

// renderD2 writes the trace as D2 source: one container with shape:
// sequence_diagram, labelled with the title. Each phase is a group holding
// the steps up to the next phase; notes across the width stand over the
// first participant, as D2 has no note spanning lifelines.
func renderD2(t *trace) string {
	var b strings.Builder
	title := t.title
	if title == "" {
		title = "trace"
	}
	fmt.Fprintf(&b, "trace: %s {\n  shape: sequence_diagram\n", d2Quote([]string{title}))
	for _, p := range t.parts {
		fmt.Fprintf(&b, "  %s: %s\n", d2ID(p.id), d2Quote([]string{p.label}))
	}
	w := d2Writer{t: t, b: &b, indent: "  "}
	for i, e := range t.events {
		if e.kind == phase {
			w.closeGroup()
			if i+1 < len(t.events) && t.events[i+1].kind != phase {
				w.openGroup(e)
				continue
			}
		}
		w.event(e)
	}
	w.closeGroup()
	b.WriteString("}\n")
	return b.String()
}

type d2Writer struct {
	t      *trace
	b      *strings.Builder
	indent string
	notes  int
	groups int
}

func (w *d2Writer) openGroup(e event) {
	w.groups++
	fmt.Fprintf(w.b, "%sphase%d: %s {\n", w.indent, w.groups, d2Quote(label(e)))
	w.indent += "  "
}

func (w *d2Writer) closeGroup() {
	if len(w.indent) > 2 {
		w.indent = w.indent[:len(w.indent)-2]
		fmt.Fprintf(w.b, "%s}\n", w.indent)
	}
}

func (w *d2Writer) event(e event) {
	style := d2Styles[e.kind]
	if style != "" {
		style = " " + style
	}
	text := d2Quote(label(e))
	if _, arrow := mermaidArrows[e.kind]; arrow {
		fmt.Fprintf(w.b, "%s%s -> %s: %s%s\n", w.indent, d2ID(w.t.part(e.from).id), d2ID(w.t.part(e.to).id), text, style)
		return
	}
	over := "ZooKeeper"
	switch {
	case e.from != "":
		over = w.t.part(e.from).id
	case len(w.t.parts) > 0:
		over = w.t.parts[0].id
	}
	w.notes++
	fmt.Fprintf(w.b, "%s%s.note%d: %s%s\n", w.indent, d2ID(over), w.notes, text, style)
}

// d2ID quotes an identifier, so that no participant's name is read as one
// of D2's keywords (label, shape, style...).
func d2ID(id string) string { return d2Quote([]string{id}) }

// d2Escape keeps a label literal in a double-quoted D2 string, where "$"
// opens a substitution.
var d2Escape = strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`)

// d2Quote makes a double-quoted D2 string of lines.
func d2Quote(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = d2Escape.Replace(l)
	}
	return `"` + strings.Join(out, `\n`) + `"`
}
