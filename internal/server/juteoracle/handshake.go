package juteoracle

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/zk19/zk19/internal/server/jute"
)

// CheckHandshake checks what the proxy does with the first frame of each
// direction: it forwards it unread, so the codec's only part in it is the
// frame boundary jute.ReadFrame finds. The official ConnectRequest or
// ConnectResponse must fill that frame exactly, with the optional readOnly
// flag either way ZooKeeper places it: after the record (3.8 writes it
// outside the record), inside it (3.9 made it the record's last field), or
// absent (a peer that does not send it, as go-zookeeper and the 3.8 server
// answering it do, which 3.9 reads by falling back).
func (o *Oracle) CheckHandshake(f Frame) (Result, error) {
	class := handshakeClasses[1]
	if f.FromClient {
		class = handshakeClasses[0]
	}
	k := &Kind{Name: class[len("org.apache.zookeeper.proto."):], Class: class}
	res := Result{Kind: k.Name, Bytes: len(f.Payload)}
	consumed, _, _, err := o.decode(k, f.Payload)
	var refused *officialError
	switch {
	case err == nil && consumed == len(f.Payload):
		res.Note = "passed through unread; the official record fills the frame"
		return res, nil
	case err == nil && consumed == len(f.Payload)-1 && f.Payload[consumed] <= 1:
		res.Note = "passed through unread; the official record and a readOnly flag after it fill the frame"
		return res, nil
	case err == nil:
		return res, fmt.Errorf("%s: the official %s reads %d of the frame's %d bytes; want all, or all but a readOnly flag",
			f.Name, k.Name, consumed, len(f.Payload))
	case !errors.As(err, &refused):
		return res, err
	}
	// The record may end with a readOnly flag this frame does not carry.
	withFlag := append(append([]byte(nil), f.Payload...), 0)
	if n, _, _, err2 := o.decode(k, withFlag); err2 != nil || n != len(withFlag) {
		return res, fmt.Errorf("%s: the official %s cannot read the frame ReadFrame cut, with or without a readOnly flag: %w", f.Name, k.Name, err)
	}
	res.Note = "passed through unread; the official record, whose last field is the optional readOnly flag, fills the frame without it"
	return res, nil
}

// goXids are the special xids of internal/server/jute under their names in
// ClientCnxn.
var goXids = map[string]int32{
	"NOTIFICATION_XID": jute.XidNotification,
	"PING_XID":         jute.XidPing,
	"AUTHPACKET_XID":   jute.XidAuth,
	"SET_WATCHES_XID":  jute.XidSetWatches,
}

// CheckConstants compares the opcodes (jute.OpName, the names the proxy
// logs and IsCreate's inputs) and the special xids of internal/server/jute with
// ZooDefs.OpCode and ClientCnxn in the jar. It returns the official opcodes
// the Go table lacks, which is not an error: the proxy only names them.
func (o *Oracle) CheckConstants() (missing []string, checked int, err error) {
	rest, err := o.call("consts")
	if err != nil {
		return nil, 0, err
	}
	var official struct{ Ops, Xids map[string]int32 }
	if err := json.Unmarshal([]byte(rest), &official); err != nil {
		return nil, 0, fmt.Errorf("consts %q: %v", rest, err)
	}
	goOps := map[string]int32{}
	for op := int32(-1000); op <= 1000; op++ {
		if name := jute.OpName(op); name != fmt.Sprintf("op(%d)", op) {
			goOps[name] = op
		}
	}
	for _, c := range []struct {
		what     string
		goT, off map[string]int32
	}{{"opcode", goOps, official.Ops}, {"xid", goXids, official.Xids}} {
		for name, v := range c.goT {
			if w, ok := c.off[name]; !ok || w != v {
				return nil, 0, fmt.Errorf("%s %s: got %d (Go); want %d (official, present: %v)", c.what, name, v, w, ok)
			}
			checked++
		}
	}
	for name, v := range official.Ops {
		if _, ok := goOps[name]; !ok {
			missing = append(missing, fmt.Sprintf("%s=%d", name, v))
		}
	}
	sort.Strings(missing)
	return missing, checked, nil
}
