package jute

import "strconv"

// Request opcodes (ZooDefs.OpCode in ZooKeeper 3.8).
const (
	OpNotification         int32 = 0
	OpCreate               int32 = 1
	OpDelete               int32 = 2
	OpExists               int32 = 3
	OpGetData              int32 = 4
	OpSetData              int32 = 5
	OpGetACL               int32 = 6
	OpSetACL               int32 = 7
	OpGetChildren          int32 = 8
	OpSync                 int32 = 9
	OpPing                 int32 = 11
	OpGetChildren2         int32 = 12
	OpCheck                int32 = 13
	OpMulti                int32 = 14
	OpCreate2              int32 = 15
	OpReconfig             int32 = 16
	OpCheckWatches         int32 = 17
	OpRemoveWatches        int32 = 18
	OpCreateContainer      int32 = 19
	OpDeleteContainer      int32 = 20
	OpCreateTTL            int32 = 21
	OpMultiRead            int32 = 22
	OpAuth                 int32 = 100
	OpSetWatches           int32 = 101
	OpSASL                 int32 = 102
	OpGetEphemerals        int32 = 103
	OpGetAllChildrenNumber int32 = 104
	OpSetWatches2          int32 = 105
	OpAddWatch             int32 = 106
	OpWhoAmI               int32 = 107
	OpCreateSession        int32 = -10
	OpCloseSession         int32 = -11
	OpError                int32 = -1
)

// Special xids that the client and server use instead of a request's own
// sequence number.
const (
	// XidNotification marks a watch event pushed by the server.
	XidNotification int32 = -1
	// XidPing marks a ping request and its reply.
	XidPing int32 = -2
	// XidAuth marks an auth request and its reply.
	XidAuth int32 = -4
	// XidSetWatches marks a setWatches request and its reply.
	XidSetWatches int32 = -8
)

var opNames = map[int32]string{
	OpNotification:         "notification",
	OpCreate:               "create",
	OpDelete:               "delete",
	OpExists:               "exists",
	OpGetData:              "getData",
	OpSetData:              "setData",
	OpGetACL:               "getACL",
	OpSetACL:               "setACL",
	OpGetChildren:          "getChildren",
	OpSync:                 "sync",
	OpPing:                 "ping",
	OpGetChildren2:         "getChildren2",
	OpCheck:                "check",
	OpMulti:                "multi",
	OpCreate2:              "create2",
	OpReconfig:             "reconfig",
	OpCheckWatches:         "checkWatches",
	OpRemoveWatches:        "removeWatches",
	OpCreateContainer:      "createContainer",
	OpDeleteContainer:      "deleteContainer",
	OpCreateTTL:            "createTTL",
	OpMultiRead:            "multiRead",
	OpAuth:                 "auth",
	OpSetWatches:           "setWatches",
	OpSASL:                 "sasl",
	OpGetEphemerals:        "getEphemerals",
	OpGetAllChildrenNumber: "getAllChildrenNumber",
	OpSetWatches2:          "setWatches2",
	OpAddWatch:             "addWatch",
	OpWhoAmI:               "whoAmI",
	OpCreateSession:        "createSession",
	OpCloseSession:         "closeSession",
	OpError:                "error",
}

// OpName returns the name of opcode op, such as "create", or "op(N)" for an
// unknown opcode.
func OpName(op int32) string {
	if s, ok := opNames[op]; ok {
		return s
	}
	return "op(" + strconv.Itoa(int(op)) + ")"
}

// IsCreate reports whether op is one of the create opcodes (create, create2,
// createContainer, createTTL) whose request body starts with a
// CreateRequest.
func IsCreate(op int32) bool {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL:
		return true
	}
	return false
}
