package diagram

import (
	"fmt"
	"net"
	"regexp"
	"strings"

	"github.com/zk19/zk19/internal/proof/claims"
)

var (
	// A server's own log line that names its client port: how a port gets
	// the server's label.
	serverPort = regexp.MustCompile(`^([\w.-]+)\| .*\(plain=\S*?:(\d+)\)`)
	claimLine  = regexp.MustCompile(`^claim ([^(:]+?) \(`)
	clientLib  = regexp.MustCompile(`^[A-Z][\w-]* zk-client: `)
	opLine     = regexp.MustCompile(`^([A-Z][\w-]*) (invoke|ok|fail|info)(?: (.*))?$`)
	session    = regexp.MustCompile(`^session (\w+) \(server (\S+), session (0x[0-9a-fA-F]+)\)$`)
	watchEvent = regexp.MustCompile(`^event \S+ Event\w+$`)
	duration   = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m)\b`)

	proxyLine   = regexp.MustCompile(`^nemesis proxy (\S+) (.*)$`)
	proxyListen = regexp.MustCompile(`^listening on (\S+), upstream (\S+)$`)
	proxyQuiet  = regexp.MustCompile(`^(conn#\d+ (open|closed)\b|closed$)`)
	proxyReply  = regexp.MustCompile(`^conn#\d+ reply (xid=(\S+)[^:]*): (.*)$`)
	proxyReq    = regexp.MustCompile(`^conn#\d+ (xid=.*)$`)
)

// zkVerbs are the requests an actor sends to ZooKeeper; any verb whose
// argument is a path is one too.
var zkVerbs = map[string]bool{
	"get": true, "set": true, "create": true, "delete": true, "children": true,
	"exists": true, "sync": true, "multi": true, "recover": true, "check": true,
}

// parser reads a log into a trace, one line at a time.
type parser struct {
	t        trace
	roles    map[string]role
	order    []string
	route    map[string]string // actor -> where its requests go: a proxy or a server
	pending  map[string]string // actor -> the callee of its open request
	proxyAt  map[string]string // listening address -> proxy key
	upstream map[string]string // proxy key -> server key
	names    map[string]string // client port -> server label, from the servers' logs
}

func parse(lines []string) *trace {
	p := &parser{
		roles: map[string]role{}, route: map[string]string{}, pending: map[string]string{},
		proxyAt: map[string]string{}, upstream: map[string]string{}, names: map[string]string{},
	}
	cleaned := make([]string, 0, len(lines))
	for _, l := range lines {
		l = text(l)
		cleaned = append(cleaned, l)
		p.scan(l)
	}
	for _, l := range cleaned {
		p.line(l)
	}
	p.t.parts = p.participants()
	return &p.t
}

// How the diagram labels a proof's decisive observation and a differs
// note, the attributes claims.AttrEvidence and claims.AttrDiffers.
const (
	evidenceLabel = "evidence: "
	differsLabel  = "differs: "
)

// text is what line l of a record says: the text a test logged
// (claims.LogText), or for the attribute of an observation its label and
// value; "" for any other framing line.
func text(l string) string {
	if _, key, value, ok := claims.ParseAttr(l); ok {
		switch key {
		case claims.AttrEvidence:
			return evidenceLabel + value
		case claims.AttrDiffers:
			return differsLabel + value
		}
		return ""
	}
	return claims.LogText(l)
}

func (p *parser) line(l string) {
	switch {
	case l == "" || claims.IsServerLog(l) || claims.IsHarnessNote(l) || clientLib.MatchString(l):
	case claimLine.MatchString(l):
		if p.t.title == "" {
			p.t.title = claimLine.FindStringSubmatch(l)[1]
		}
	case strings.HasPrefix(l, "# "):
		p.add(event{kind: phase, text: strings.TrimPrefix(l, "# ")})
	case strings.HasPrefix(l, evidenceLabel), strings.HasPrefix(l, differsLabel):
		p.add(event{kind: proof, text: l})
	case proxyLine.MatchString(l):
		m := proxyLine.FindStringSubmatch(l)
		p.proxy(m[1], m[2])
	case strings.HasPrefix(l, "nemesis "):
		p.add(event{kind: fault, from: p.use(nemesisKey, nemesisRole), text: strings.TrimPrefix(l, "nemesis ")})
	case opLine.MatchString(l):
		m := opLine.FindStringSubmatch(l)
		p.op(m[1], m[2], m[3])
	default:
		p.remark(l)
	}
}

func (p *parser) add(e event) { p.t.events = append(p.t.events, e) }

// use makes key a participant, in order of first use within its role.
func (p *parser) use(key string, r role) string {
	if _, ok := p.roles[key]; !ok {
		p.roles[key] = r
		p.order = append(p.order, key)
	}
	return key
}

func (p *parser) isActor(name string) bool {
	r, ok := p.roles[name]
	return ok && r == actorRole
}

// at names what listens on addr: a proxy the log announced, else a server.
func (p *parser) at(addr string) (string, role) {
	if k, ok := p.proxyAt[addr]; ok {
		return k, proxyRole
	}
	return "server " + addr, serverRole
}

// server is where actor's requests go now.
func (p *parser) server(actor string) string {
	if k, ok := p.route[actor]; ok {
		return p.use(k, p.roleOf(k))
	}
	return p.use(unknownKey, serverRole)
}

func (p *parser) roleOf(key string) role {
	if strings.HasPrefix(key, "proxy ") {
		return proxyRole
	}
	return serverRole
}

// serverName is how a text names the server at addr, or "" when only its
// address is known.
func (p *parser) serverName(addr string) string {
	if _, port, err := net.SplitHostPort(addr); err == nil {
		return p.names[port]
	}
	return ""
}

// scan learns, before any line is drawn, what later lines need: the
// servers' labels by client port and the proxies' listening addresses.
func (p *parser) scan(l string) {
	if m := serverPort.FindStringSubmatch(l); m != nil {
		p.names[m[2]] = m[1]
	}
	if m := proxyLine.FindStringSubmatch(l); m != nil {
		if a := proxyListen.FindStringSubmatch(m[2]); a != nil {
			p.proxyAt[a[1]] = "proxy " + m[1]
		}
	}
}

// participants orders the lifelines by role, each role in order of first
// use, and names them.
func (p *parser) participants() []participant {
	servers := 0
	for _, k := range p.order {
		if p.roles[k] == serverRole {
			servers++
		}
	}
	var out []participant
	ids := map[string]bool{}
	for r := actorRole; r <= nemesisRole; r++ {
		for _, k := range p.order {
			if p.roles[k] != r {
				continue
			}
			label := p.label(k, r, servers)
			out = append(out, participant{key: k, role: r, id: uniqueID(label, ids), label: label})
		}
	}
	return out
}

func (p *parser) label(key string, r role, servers int) string {
	switch r {
	case proxyRole:
		return strings.TrimPrefix(key, "proxy ")
	case serverRole:
		addr := strings.TrimPrefix(key, "server ")
		if name := p.serverName(addr); name != "" {
			return name
		}
		if _, port, err := net.SplitHostPort(addr); err == nil && servers > 1 {
			return "ZooKeeper port " + port
		}
		return "ZooKeeper"
	}
	return key
}

var nonID = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// mermaidKeywords are the words Mermaid's sequence lexer takes for syntax
// before it tries a participant's name, whatever their case.
var mermaidKeywords = map[string]bool{
	"box": true, "participant": true, "actor": true, "create": true, "destroy": true,
	"loop": true, "rect": true, "opt": true, "alt": true, "else": true, "par": true,
	"par_over": true, "and": true, "critical": true, "option": true, "break": true,
	"end": true, "links": true, "link": true, "properties": true, "details": true,
	"over": true, "note": true, "activate": true, "deactivate": true, "title": true,
	"sequencediagram": true, "autonumber": true, "off": true,
}

// uniqueID turns a label into an identifier Mermaid accepts, unique
// regardless of case as D2 wants it (D2 source quotes it, so its own
// keywords are no concern).
func uniqueID(label string, taken map[string]bool) string {
	id := strings.Trim(nonID.ReplaceAllString(label, "_"), "_")
	if id == "" || id[0] >= '0' && id[0] <= '9' || mermaidKeywords[strings.ToLower(id)] {
		id = "p_" + id
	}
	base := id
	for n := 2; taken[strings.ToLower(id)]; n++ {
		id = fmt.Sprintf("%s_%d", base, n)
	}
	taken[strings.ToLower(id)] = true
	return id
}
