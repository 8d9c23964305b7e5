package jute

import (
	"errors"
	"fmt"
)

// DeleteRequest is the body of a delete request.
type DeleteRequest struct {
	Path    string
	Version int32 // -1 deletes whatever the version
}

// DecodeDeleteRequest decodes a delete request body (the payload after the
// RequestHeader). Trailing bytes are ignored.
func DecodeDeleteRequest(body []byte) (DeleteRequest, error) {
	r, _, err := decode(body, func(d *decoder) DeleteRequest {
		return DeleteRequest{Path: d.string("DeleteRequest.path"), Version: d.int32("DeleteRequest.version")}
	})
	return r, err
}

// Append appends the encoded request body to dst.
func (r DeleteRequest) Append(dst []byte) []byte {
	dst = appendString(dst, r.Path)
	return appendInt32(dst, r.Version)
}

// PathWatchRequest is the body of an exists, getData, getChildren or
// getChildren2 request: Jute declares ExistsRequest, GetDataRequest,
// GetChildrenRequest and GetChildren2Request as four records with the same
// two fields, so one type decodes them all.
type PathWatchRequest struct {
	Path  string
	Watch bool // leave a watch on the node
}

// DecodePathWatchRequest decodes the body of one of the requests listed at
// PathWatchRequest. Trailing bytes are ignored.
func DecodePathWatchRequest(body []byte) (PathWatchRequest, error) {
	r, _, err := decode(body, func(d *decoder) PathWatchRequest {
		return PathWatchRequest{Path: d.string("PathWatchRequest.path"), Watch: d.bool("PathWatchRequest.watch")}
	})
	return r, err
}

// Append appends the encoded request body to dst.
func (r PathWatchRequest) Append(dst []byte) []byte {
	dst = appendString(dst, r.Path)
	return appendBool(dst, r.Watch)
}

// RequestPath decodes the body of a request with opcode op just far enough
// to return the path it names. It knows the create opcodes (see IsCreate),
// delete, exists, getData, getChildren and getChildren2; for any other
// opcode it returns an error wrapping errors.ErrUnsupported, without
// reading body. A create's path is the one the client sent: for a
// sequential node, the prefix, not the name the server chose.
func RequestPath(op int32, body []byte) (string, error) {
	switch {
	case IsCreate(op):
		r, err := DecodeCreateRequest(body)
		return r.Path, err
	case op == OpDelete:
		r, err := DecodeDeleteRequest(body)
		return r.Path, err
	case op == OpExists, op == OpGetData, op == OpGetChildren, op == OpGetChildren2:
		r, err := DecodePathWatchRequest(body)
		return r.Path, err
	}
	return "", fmt.Errorf("jute: no path decoder for %s: %w", OpName(op), errors.ErrUnsupported)
}
