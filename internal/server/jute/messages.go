package jute

// RequestHeader starts every client request after the session handshake.
type RequestHeader struct {
	Xid  int32 // client sequence number or a special Xid* value
	Type int32 // opcode, one of the Op* constants
}

// DecodeRequestHeader decodes the header at the start of a request frame's
// payload p and returns it with the rest of the payload (the body), which
// aliases p.
func DecodeRequestHeader(p []byte) (RequestHeader, []byte, error) {
	return decode(p, func(d *decoder) RequestHeader {
		return RequestHeader{Xid: d.int32("RequestHeader.xid"), Type: d.int32("RequestHeader.type")}
	})
}

// Append appends the encoded header to dst.
func (h RequestHeader) Append(dst []byte) []byte {
	dst = appendInt32(dst, h.Xid)
	return appendInt32(dst, h.Type)
}

// ReplyHeader starts every server reply after the session handshake.
type ReplyHeader struct {
	Xid  int32 // xid of the request answered, or a special Xid* value
	Zxid int64 // last zxid the server had applied
	Err  int32 // 0 on success, else a ZooKeeper error code (e.g. -110 NodeExists)
}

// DecodeReplyHeader decodes the header at the start of a reply frame's
// payload p and returns it with the rest of the payload (the body), which
// aliases p.
func DecodeReplyHeader(p []byte) (ReplyHeader, []byte, error) {
	return decode(p, func(d *decoder) ReplyHeader {
		return ReplyHeader{
			Xid:  d.int32("ReplyHeader.xid"),
			Zxid: d.int64("ReplyHeader.zxid"),
			Err:  d.int32("ReplyHeader.err"),
		}
	})
}

// Append appends the encoded header to dst.
func (h ReplyHeader) Append(dst []byte) []byte {
	dst = appendInt32(dst, h.Xid)
	dst = appendInt64(dst, h.Zxid)
	return appendInt32(dst, h.Err)
}

// ACL is one access-control entry: a permission bit set and an identity
// (scheme "world" with ID "anyone" grants everyone). The official ACL record
// holds the identity as a nested Id record; the jute tags name the official
// fields for the differential test in internal/server/juteoracle.
type ACL struct {
	Perms  int32
	Scheme string `jute:"id.scheme"`
	ID     string `jute:"id.id"`
}

// aclMinLen is the smallest encoded ACL: perms plus two empty strings.
const aclMinLen = 12

// CreateRequest is the body shared by every create opcode (see IsCreate).
// A createTTL body carries an extra trailing long (the TTL), which
// DecodeCreateRequest ignores.
type CreateRequest struct {
	Path  string
	Data  []byte // nil encodes as length -1
	ACL   []ACL  // nil encodes as count -1
	Flags int32  // create mode: 1 ephemeral, 2 sequential, ...
}

// DecodeCreateRequest decodes a create request body (the payload after the
// RequestHeader). Trailing bytes after the flags are ignored. Data and the
// strings are copies, not aliases of body.
func DecodeCreateRequest(body []byte) (CreateRequest, error) {
	r, _, err := decode(body, func(d *decoder) (r CreateRequest) {
		r.Path = d.string("CreateRequest.path")
		r.Data = d.buffer("CreateRequest.data")
		if n := d.count("CreateRequest.acl", aclMinLen); n >= 0 && d.err == nil {
			r.ACL = make([]ACL, n)
			for i := range r.ACL {
				r.ACL[i].Perms = d.int32("ACL.perms")
				r.ACL[i].Scheme = d.string("ACL.id.scheme")
				r.ACL[i].ID = d.string("ACL.id.id")
			}
		}
		r.Flags = d.int32("CreateRequest.flags")
		return r
	})
	return r, err
}

// Append appends the encoded request body to dst.
func (r CreateRequest) Append(dst []byte) []byte {
	dst = appendString(dst, r.Path)
	dst = appendBuffer(dst, r.Data)
	if r.ACL == nil {
		dst = appendInt32(dst, -1)
	} else {
		dst = appendInt32(dst, int32(len(r.ACL)))
		for _, a := range r.ACL {
			dst = appendInt32(dst, a.Perms)
			dst = appendString(dst, a.Scheme)
			dst = appendString(dst, a.ID)
		}
	}
	return appendInt32(dst, r.Flags)
}

// WatcherEvent is the body of a notification: the event's type (1 created,
// 2 deleted, 3 data changed, 4 children changed), the session state, and
// the path whose watch fired.
type WatcherEvent struct {
	Type  int32
	State int32
	Path  string
}

// DecodeWatcherEvent decodes a notification's body.
func DecodeWatcherEvent(p []byte) (WatcherEvent, error) {
	ev, _, err := decode(p, func(d *decoder) WatcherEvent {
		return WatcherEvent{Type: d.int32("WatcherEvent.type"), State: d.int32("WatcherEvent.state"), Path: d.string("WatcherEvent.path")}
	})
	return ev, err
}
