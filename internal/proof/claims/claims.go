// Package claims reads the zk19 claim index (testdata/claims.json) and the
// claim IDs that the root package's Tests and Examples cite. The root
// package's meta tests and cmd/evidence share it, so both apply the same
// rules.
//
// The index is the one source of truth for a claim: its place in the
// article (section key, paragraph and sentence, see Sentences, with terms
// that occur in that sentence), its statement in English and in Chinese,
// its proofs. Beside the claims it holds the article's statements that no test
// here can prove (Documentary) and the server code the claims rest on
// (Source), so the evidence table renders data, not prose kept in Go.
//
// A run's evidence is data too: the test attributes a proof sets
// (AttrEvidence, AttrDiffers, and AttrVerdict with VerdictRefuted or
// VerdictNotShown), the one list of keys and verdict words that
// cmd/evidence and internal/record/diagram read.
package claims

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Index is the claim index.
type Index struct {
	Article string `json:"article"`
	// ArticleFile is where the article's text is found, relative to the
	// module root; it is not part of the repository.
	ArticleFile string    `json:"articleFile,omitempty"`
	Sections    []Section `json:"sections"`
	Claims      []Claim   `json:"claims"`
	// Pending are claims written down before their proofs land. They are in
	// neither the evidence table nor doc.go; one whose ID is also among
	// Claims replaces that entry when its proof lands.
	Pending     []Claim       `json:"pending,omitempty"`
	Documentary []Documentary `json:"documentary,omitempty"`
	// Context gives each remaining sentence of the article, one that no
	// claim or documentary item cites, its one line: what it is to a
	// reader (a citation, a question, a diagram, the premise of a claim),
	// so that every sentence has an entry (CheckCoverage).
	Context []Context `json:"context,omitempty"`
	// Diagrams say where each of the article's diagrams ends: the article
	// runs the next paragraph's text on from a diagram's last line.
	Diagrams []Diagram `json:"diagrams,omitempty"`
	Sources  []Source  `json:"sources,omitempty"`
}

// Section is one headed part of the article. Claims name it by Key.
type Section struct {
	Key   string `json:"key"`
	Title string `json:"title"` // the heading line, exactly as the article has it
}

// Name is how the table of contents heads the section: Key + " " + Title.
func (s Section) Name() string { return s.Key + " " + s.Title }

// Claim is one entry of the index.
type Claim struct {
	ID      string `json:"id"`
	Section string `json:"section"` // a Section's Key
	// Paragraph is the paragraph of the section that makes the claim, and
	// Sentence the sentence of that paragraph, as Sentences counts them.
	Paragraph int `json:"paragraph"`
	Sentence  int `json:"sentence"`
	// Terms are two to four terms that occur, as written, in that sentence
	// (identifiers such as ephemeralOwner, short Chinese terms such as
	// 前驱), so that a wrong Sentence is caught (CheckCitations). Terms,
	// not sentences: the index cites the article and never copies it.
	Terms     []string `json:"terms"`
	Statement string   `json:"statement"`
	// Zh is the claim restated in Chinese in the index's own words, for
	// doc.go and the Chinese evidence table.
	Zh     string `json:"zh"`
	Beyond bool   `json:"beyond"`
	// Proof names the Tests and Examples that prove the claim: a root
	// package test by its name, a test of another package of the module by
	// its directory and name ("internal/server/faultproxy.TestX", see SplitProof).
	Proof []string `json:"proof"`
	// Code names the module's own code the claim is about, where it is
	// ours: "lock.(*attempt).await", "fence.Token.Compare",
	// "fence/fencetest.ClearMark" (a package directory, then a function or
	// a method as go doc writes it). doc.go gives each its file and line.
	Code  []string `json:"code,omitempty"`
	Needs []string `json:"needs,omitempty"`
	// Differs says, in the index's words, what the article states where a
	// proof may set an AttrDiffers attribute, and how far the statement
	// still holds.
	Differs string `json:"differs,omitempty"`
	// DiffersZh is Differs in Chinese, for the Chinese table.
	DiffersZh string `json:"differsZh,omitempty"`
	// Diagram names the proof whose recorded trace the evidence table draws
	// as a sequence diagram for this claim ("" for none).
	Diagram string `json:"diagram,omitempty"`
	// Decisive picks the claim's one decisive observation among those its
	// proofs state (nil: the first), for the row of the Chinese table.
	Decisive *Pick `json:"decisive,omitempty"`
	// Report marks a sentence that reports the article's own run (official
	// 3.9.6, the Java client): its proof checks this run's counterpart, and
	// the records and doc.go show it beside this run, not as a claim that
	// holds here.
	Report bool `json:"report,omitempty"`
}

// Pick chooses one observation of a claim: the first whose English starts
// with Observation ("differs: " for a differs note), and of it the
// Clause-th clause (from 1, clauses split at "; " and "；"; 0: all of it).
type Pick struct {
	Observation string `json:"observation"`
	Clause      int    `json:"clause,omitempty"`
}

// Where is the claim's place in the article: "§3 ¶2".
func (c Claim) Where() string { return where(c.Section, c.Paragraph) }

// Locator is the claim's sentence of the article and its terms.
func (c Claim) Locator() Locator {
	return Locator{Section: c.Section, Paragraph: c.Paragraph, Sentence: c.Sentence, Terms: c.Terms}
}

// Documentary is a statement of the article that no test here executes,
// with the reason. Where the harness does what the article describes in
// another way, the reason says how in one line.
type Documentary struct {
	ID        string `json:"id"`
	Section   string `json:"section"`
	Paragraph int    `json:"paragraph"`
	// Sentence and Terms are as a Claim's.
	Sentence int      `json:"sentence"`
	Terms    []string `json:"terms"`
	Subject  string   `json:"subject"`
	// Zh is the subject restated in Chinese, as a Claim's Zh.
	Zh     string `json:"zh"`
	Reason string `json:"reason"`
	// ReasonZh is the reason in Chinese, for the Chinese table.
	ReasonZh string `json:"reasonZh"`
}

// Where is the item's place in the article: "§2 ¶3".
func (d Documentary) Where() string { return where(d.Section, d.Paragraph) }

// Locator is the item's sentence of the article and its terms.
func (d Documentary) Locator() Locator {
	return Locator{Section: d.Section, Paragraph: d.Paragraph, Sentence: d.Sentence, Terms: d.Terms}
}

// Locator is one sentence of the article, counted as Sentences counts,
// and terms that occur in it.
type Locator struct {
	Section   string
	Paragraph int
	Sentence  int
	Terms     []string
}

// String is how doc.go and the Chinese table cite the sentence: "§3 ¶2 句3".
func (l Locator) String() string {
	if l.Sentence == 0 {
		return fmt.Sprintf("%s ¶%d 图", l.Section, l.Paragraph)
	}
	return fmt.Sprintf("%s ¶%d 句%d", l.Section, l.Paragraph, l.Sentence)
}

// The kinds of a Context entry.
const (
	KindCitation = "citation" // a source the article cites: a paper, a file, a document
	KindQuestion = "question" // a question the article asks (an exercise's, or its own)
	KindDiagram  = "diagram"  // a diagram's own text
	KindPremise  = "premise"  // what a claim rests on or follows from: Of names the claim
	KindAnswer   = "answer"   // an exercise's answer: Of names the exercise's claim
	KindReport   = "report"   // what the article's own run did, where, and with what
)

// Context is one sentence of the article that is neither a claim nor a
// documentary item, with what it is to a reader.
type Context struct {
	Section   string   `json:"section"`
	Paragraph int      `json:"paragraph"`
	Sentence  int      `json:"sentence"` // 0: the paragraph's diagram
	Kind      string   `json:"kind"`
	Of        string   `json:"of,omitempty"` // the claim a premise or an answer belongs to
	Terms     []string `json:"terms"`
}

// Locator is the sentence and its terms.
func (c Context) Locator() Locator {
	return Locator{Section: c.Section, Paragraph: c.Paragraph, Sentence: c.Sentence, Terms: c.Terms}
}

// Line is how doc.go shows the entry: "premise of L8", "citation".
func (c Context) Line() string {
	if c.Of != "" {
		return c.Kind + " of " + c.Of
	}
	return c.Kind
}

// Diagram is where one of the article's diagrams ends: the text Last
// closes the diagram on its last line, and what follows it is the
// paragraph's first sentence.
type Diagram struct {
	Section   string `json:"section"`
	Paragraph int    `json:"paragraph"`
	Last      string `json:"last"`
}

// Source is a piece of ZooKeeper server code that claims rest on, as read
// in apache/zookeeper at each release in Read.
type Source struct {
	Code   string       `json:"code"`   // Class or Class.method
	File   string       `json:"file"`   // path in apache/zookeeper
	Role   string       `json:"role"`   // what the claims rely on it for
	RoleZh string       `json:"roleZh"` // Role in Chinese, for the Chinese table
	Claims []string     `json:"claims"`
	Tests  []string     `json:"tests"` // proofs of Claims that drive this path
	Read   []SourceRead `json:"read"`
}

// SourceRead is where a Source was read at one release.
type SourceRead struct {
	Version string `json:"version"` // 3.8.0
	Tag     string `json:"tag"`     // the git tag read, release-3.8.0-1
	Method  string `json:"method"`
	Line    int    `json:"line"`
}

func where(section string, paragraph int) string {
	if paragraph > 0 {
		return fmt.Sprintf("%s ¶%d", section, paragraph)
	}
	return section
}

// Load reads the index at path. A field the index types do not know is an
// error; a decoding error names path.
func Load(path string) (*Index, error) {
	var ix Index
	if err := decodeFile(path, &ix); err != nil {
		return nil, err
	}
	return &ix, nil
}

// decodeFile decodes the JSON file at path into v; a field v's type does
// not know is an error, and a decoding error names path.
func decodeFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Marshal returns the index as the file holds it: indented by two spaces,
// HTML left unescaped, and a nil proof list set to an empty one.
func (ix *Index) Marshal() ([]byte, error) {
	for i := range ix.Claims {
		if ix.Claims[i].Proof == nil {
			ix.Claims[i].Proof = []string{}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ix); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Claim returns the claim with the given ID, or nil.
func (ix *Index) Claim(id string) *Claim {
	for i := range ix.Claims {
		if ix.Claims[i].ID == id {
			return &ix.Claims[i]
		}
	}
	return nil
}

// Section returns the section with the given key, or nil.
func (ix *Index) Section(key string) *Section {
	for i := range ix.Sections {
		if ix.Sections[i].Key == key {
			return &ix.Sections[i]
		}
	}
	return nil
}

// SplitProof splits a proof list entry into the directory of its package,
// relative to the module root ("" for the root package), and the test's
// name.
func SplitProof(name string) (dir, test string) {
	if i := strings.LastIndex(name, "."); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}
