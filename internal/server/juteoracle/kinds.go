package juteoracle

import (
	"reflect"
	"strings"

	"github.com/zk19/zk19/internal/server/jute"
)

// Kinds is every record internal/server/jute decodes or encodes, paired with the
// official class of the server's jar. A record added to internal/server/jute is one
// line here, such as
//
//	body("org.apache.zookeeper.proto.DeleteRequest", jute.DecodeDeleteRequest, bodyOf(opIs(jute.OpDelete))),
//
// for a Go type with an Append method; its cases, seeds and fuzzing follow
// from the type.
//
// The proxy reads the RequestHeader of every client frame after the first,
// a create body (create, create2, createContainer, createTTL) through
// DecodeCreateRequest, and the ReplyHeader of every server frame after the
// first. The first frame of each direction (ConnectRequest,
// ConnectResponse) is passed through unread; CheckHandshake covers it.
var Kinds = []Kind{
	header("org.apache.zookeeper.proto.RequestHeader", jute.DecodeRequestHeader, requestPayload),
	header("org.apache.zookeeper.proto.ReplyHeader", jute.DecodeReplyHeader, replyPayload),
	body("org.apache.zookeeper.proto.CreateRequest", jute.DecodeCreateRequest, bodyOf(isPlainCreate)),
	// createTTL's body is a CreateRequest followed by a long the proxy skips.
	body("org.apache.zookeeper.proto.CreateTTLRequest", jute.DecodeCreateRequest, bodyOf(opIs(jute.OpCreateTTL))).
		followedBy("ttl", int64(60_000), 8),
	// The link proxies read the leader's quorum stream (packets back to
	// back) and a PROPOSAL's TxnHeader; no client frame carries them.
	header("org.apache.zookeeper.server.quorum.QuorumPacket", jute.DecodeQuorumPacket, notInClientFrames),
	header("org.apache.zookeeper.txn.TxnHeader", jute.DecodeTxnHeader, notInClientFrames),
}

// handshakeClasses are the first frames' records, which the proxy forwards
// unread.
var handshakeClasses = []string{"org.apache.zookeeper.proto.ConnectRequest", "org.apache.zookeeper.proto.ConnectResponse"}

// Kind is one record of Kinds.
type Kind struct {
	Name  string // "CreateRequest", or "CreateTTLRequest as CreateRequest"
	Class string // the official class

	typ     reflect.Type
	decode  func([]byte) (v any, consumed int, err error)
	encode  func(any) []byte
	carried func(Frame) []byte

	// The official fields after the Go record's, which the Go decoder skips
	// (createTTL's ttl): their values when the official side encodes, and
	// their encoded length.
	trailer    map[string]any
	trailerLen int
}

type encoder interface{ Append([]byte) []byte }

// header makes a Kind of a decoder that returns the rest of its input.
func header[T encoder](class string, decode func([]byte) (T, []byte, error), carried func(Frame) []byte) Kind {
	return newKind[T](class, func(p []byte) (any, int, error) {
		v, rest, err := decode(p)
		return v, len(p) - len(rest), err
	}, carried)
}

// body makes a Kind of a decoder that ignores what follows the record; what
// it consumed is the length of its own encoding, which the value determines.
func body[T encoder](class string, decode func([]byte) (T, error), carried func(Frame) []byte) Kind {
	return newKind[T](class, func(p []byte) (any, int, error) {
		v, err := decode(p)
		if err != nil {
			return v, 0, err
		}
		return v, len(v.Append(nil)), nil
	}, carried)
}

func newKind[T encoder](class string, decode func([]byte) (any, int, error), carried func(Frame) []byte) Kind {
	typ := reflect.TypeFor[T]()
	name := typ.Name()
	if short := class[strings.LastIndex(class, ".")+1:]; short != name {
		name = short + " as " + name
	}
	return Kind{Name: name, Class: class, typ: typ, decode: decode, carried: carried,
		encode: func(v any) []byte { return v.(T).Append(nil) }}
}

func (k Kind) followedBy(tag string, v any, n int) Kind {
	k.trailer = map[string]any{tag: v}
	k.trailerLen = n
	return k
}

// Carried returns the part of a captured frame that holds this record, or
// nil.
func (k *Kind) Carried(f Frame) []byte { return k.carried(f) }

func notInClientFrames(Frame) []byte { return nil }

func requestPayload(f Frame) []byte {
	if f.FromClient && !f.First {
		return f.Payload
	}
	return nil
}

func replyPayload(f Frame) []byte {
	if !f.FromClient && !f.First {
		return f.Payload
	}
	return nil
}

// bodyOf selects the body of a request whose opcode satisfies op.
func bodyOf(op func(int32) bool) func(Frame) []byte {
	return func(f Frame) []byte {
		if p := requestPayload(f); p != nil {
			if h, rest, err := jute.DecodeRequestHeader(p); err == nil && op(h.Type) {
				return rest
			}
		}
		return nil
	}
}

func isPlainCreate(op int32) bool { return jute.IsCreate(op) && op != jute.OpCreateTTL }

// opIs selects the given opcodes.
func opIs(ops ...int32) func(int32) bool {
	return func(op int32) bool {
		for _, o := range ops {
			if op == o {
				return true
			}
		}
		return false
	}
}
