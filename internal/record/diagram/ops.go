package diagram

import (
	"fmt"
	"strings"
)

// op reads one of an actor's Jepsen-style lines.
func (p *parser) op(actor, verb, rest string) {
	p.use(actor, actorRole)
	switch verb {
	case "invoke":
		p.invoke(actor, rest)
	case "ok":
		p.complete(actor, reply, join("ok", rest))
	case "fail":
		p.complete(actor, lost, join("fail", rest))
	case "info":
		p.info(actor, rest)
	}
}

func join(word, rest string) string {
	if rest == "" {
		return word
	}
	return word + " " + rest
}

// invoke draws a request to whoever it addresses: ZooKeeper (through the
// actor's proxy if it has one), the resource, or another actor. A request
// to none of them is a note over the actor.
func (p *parser) invoke(actor, rest string) {
	callee := p.callee(actor, rest)
	if callee == "" {
		delete(p.pending, actor)
		p.add(event{kind: note, from: actor, text: join("invoke", rest)})
		return
	}
	p.pending[actor] = callee
	k := call
	if p.isActor(callee) {
		k = signal
	}
	p.add(event{kind: k, from: actor, to: callee, text: rest})
}

func (p *parser) callee(actor, rest string) string {
	f := strings.Fields(rest)
	switch {
	case len(f) == 0:
		return ""
	case zkVerbs[f[0]] || len(f) > 1 && strings.HasPrefix(f[1], "/"):
		return p.server(actor)
	case f[0] == "write" || f[0] == "read":
		return p.use(resourceKey, resourceRole)
	case len(f) > 1 && f[1] != actor && p.isActor(f[1]):
		return f[1]
	}
	return ""
}

// complete draws the answer to actor's open request as an arrow back from
// its callee. Without an open request the line is a note; an empty "ok" to
// a word sent to another actor says nothing and is not drawn.
func (p *parser) complete(actor string, k kind, text string) {
	callee, open := p.pending[actor]
	delete(p.pending, actor)
	switch {
	case !open && text == "ok":
	case !open:
		p.add(event{kind: note, from: actor, text: text})
	case p.isActor(callee):
		if text != "ok" {
			p.add(event{kind: note, from: actor, text: text})
		}
	default:
		p.add(event{kind: k, from: callee, to: actor, text: text})
	}
}

// info reads what an actor saw: a session state (which also says where its
// requests go from now on), a watch event, the unknown outcome of its open
// request, or anything else as a note.
func (p *parser) info(actor, rest string) {
	if m := session.FindStringSubmatch(rest); m != nil {
		state, addr, id := m[1], m[2], m[3]
		key, r := p.at(addr)
		if state == "HasSession" {
			p.route[actor] = p.use(key, r)
		}
		text := fmt.Sprintf("session %s %s", id, state)
		if r == proxyRole {
			text += " via " + strings.TrimPrefix(key, "proxy ")
		} else if name := p.serverName(addr); name != "" {
			text += " on " + name
		}
		p.add(event{kind: note, from: actor, text: text})
		return
	}
	if watchEvent.MatchString(rest) {
		p.add(event{kind: signal, from: p.server(actor), to: actor, text: rest})
		return
	}
	if _, open := p.pending[actor]; open {
		p.complete(actor, lost, join("info", rest))
		return
	}
	p.add(event{kind: note, from: actor, text: rest})
}

// proxy reads a client proxy's decisions: the requests it forwards and
// replies it sees are arrows to and from its upstream server, the faults it
// injects notes over its lifeline.
func (p *parser) proxy(name, rest string) {
	key := "proxy " + name
	switch {
	case proxyListen.MatchString(rest):
		m := proxyListen.FindStringSubmatch(rest)
		p.proxyAt[m[1]] = key
		p.upstream[key], _ = p.at(m[2])
	case proxyQuiet.MatchString(rest):
	case proxyReply.MatchString(rest):
		m := proxyReply.FindStringSubmatch(rest)
		up := p.use(p.upstreamOf(key), serverRole)
		p.add(event{kind: reply, from: up, to: p.use(key, proxyRole), text: "reply " + m[1]})
		if what, more, _ := strings.Cut(m[3], "; "); !strings.HasPrefix(what, "forwarded") {
			p.add(event{kind: fault, from: key, text: strings.TrimSuffix(fmt.Sprintf("reply %s, xid=%s; %s", what, m[2], more), "; ")})
		}
	case proxyReq.MatchString(rest):
		up := p.use(p.upstreamOf(key), serverRole)
		p.add(event{kind: call, from: p.use(key, proxyRole), to: up, text: proxyReq.FindStringSubmatch(rest)[1]})
	default:
		p.add(event{kind: fault, from: p.use(key, proxyRole), text: rest})
	}
}

func (p *parser) upstreamOf(proxy string) string {
	if k, ok := p.upstream[proxy]; ok {
		return k
	}
	return unknownKey
}

// remark keeps a line of no known kind: over the actor (or the resource) it
// starts with, else across the diagram.
func (p *parser) remark(l string) {
	first, _, _ := strings.Cut(l, " ")
	first = strings.TrimSuffix(first, ":")
	switch {
	case p.isActor(first):
		p.add(event{kind: note, from: first, text: l})
	case first == resourceKey:
		p.add(event{kind: note, from: p.use(resourceKey, resourceRole), text: l})
	case duration.MatchString(l):
		p.add(event{kind: elapsed, text: l})
	default:
		p.add(event{kind: remark, text: l})
	}
}
