package diagram

// kind says how an event is drawn.
type kind int

const (
	call    kind = iota // a request: solid arrow from the caller
	reply               // its result: dashed arrow back to the caller
	lost                // a failed request, or one whose outcome is unknown: crossed arrow back
	signal              // a message nobody waits on (a watch event, a word to another actor)
	note                // what one participant saw or did
	fault               // a fault, over the nemesis or proxy that injected it
	phase               // a step of the scenario ("# ..."), across the diagram
	remark              // a free-text observation, across the diagram
	elapsed             // a remark that measures time ("798ms after the cut")
	proof               // the decisive evidence: (or differs:) line, across the diagram
)

// event is one drawn step. from and to are participant keys; notes have
// only from, lines across the diagram neither.
type event struct {
	kind     kind
	from, to string
	text     string
	times    int // the number of identical consecutive steps it stands for; 0 means one
}

// role orders the participants: actors on the left, then what their
// requests pass through and reach, the nemesis last.
type role int

const (
	actorRole role = iota
	proxyRole
	serverRole
	resourceRole
	nemesisRole
)

// participant is a lifeline. key is how events name it, id how the diagram
// source names it, label what the reader sees.
type participant struct {
	key       string
	role      role
	id, label string
}

// trace is what a log says, ready to draw.
type trace struct {
	title   string
	parts   []participant
	events  []event
	omitted int // events left out to keep the diagram readable
}

func (t *trace) part(key string) participant {
	for _, p := range t.parts {
		if p.key == key {
			return p
		}
	}
	return participant{key: key, id: key, label: key}
}

// Keys of the participants that are not named in the lines.
const (
	nemesisKey  = "nemesis"
	resourceKey = "resource"
	unknownKey  = "server ?" // where an actor's requests go before any session line says
)

// A diagram's bounds: past about forty messages, and sixty steps with the
// notes, a sequence diagram stops being read.
const (
	maxMessages = 40
	maxEvents   = 60
)

// FromLog draws a test's log as a sequence diagram, in Mermaid and in D2.
// lines are the test's output lines, with or without go test's
// "file.go:123: " prefixes; lines of no known kind are kept as remarks,
// server logs, framing and client library chatter are dropped. title heads
// both diagrams; when empty, the claim line's IDs are used.
func FromLog(title string, lines []string) (mermaid, d2 string) {
	t := parse(lines)
	if title != "" {
		t.title = title
	}
	t.events = collapse(t.events)
	t.events, t.omitted = limit(t.events)
	return renderMermaid(t), renderD2(t)
}
