package scene

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/lock"
)

// LockIdentity is the digest identity (user:password) the lock's
// participants share; thiefIdentity is another one.
const (
	LockIdentity  = "locker:locker-secret"
	thiefIdentity = "thief:a-guess"
)

// ACLScene is the Scene of claim A1: a lock whose parent and candidates
// carry given ACLs, on the shared server: O (authenticated as the lock's
// participants, so it can also clean up behind a creator-only parent), A
// and B contending, and T, a session with a digest identity of its own.
type ACLScene struct {
	*Scene
	T       *zkclient.Client
	nodeACL []zk.ACL // the ACL the contenders' Lockers ask for (lock.WithACL)
	A, B    *Contender
}

// NewACLScene sets A1's scene up with the parent's ACL and the ACL the
// contenders ask for their nodes.
func NewACLScene(t *testing.T, parentACL, nodeACL []zk.ACL) *ACLScene {
	t.Helper()
	sc := &ACLScene{Scene: NewScene(t, []string{harness.SharedServer(t).Client}), nodeACL: nodeACL}
	authenticate(t, sc.O, LockIdentity)
	sc.Parent += "/locks"
	sc.OLog.Invoke("create %s with ACL %v", sc.Parent, parentACL)
	if _, err := sc.O.Create(sc.Parent, nil, 0, parentACL); err != nil {
		t.Fatalf("create %s: %v", sc.Parent, err)
	}
	sc.OLog.Ok("")
	sc.requireACL(t, sc.Parent, parentACL)
	opts := JoinOpts{Lock: []lock.Option{lock.WithACL(nodeACL)}}
	sc.A = sc.Join("A", opts)
	authenticate(t, sc.A.Session, LockIdentity)
	sc.B = sc.Join("B", opts)
	authenticate(t, sc.B.Session, LockIdentity)
	sc.T = zkclient.Connect(t, "T", sc.servers)
	authenticate(t, sc.T, thiefIdentity)
	return sc
}

// authenticate adds a digest identity to c's session.
func authenticate(t *testing.T, c *zkclient.Client, identity string) {
	t.Helper()
	if err := c.AddAuth("digest", []byte(identity)); err != nil {
		t.Fatalf("%s: add digest auth: %v", c.Name, err)
	}
}

// HoldAndWait makes A hold and B wait on A's node. Both candidates carry the
// ACL their Lockers asked for, as O reads it back from the server.
func (sc *ACLScene) HoldAndWait(t *testing.T) (*lock.Held, *Acquisition) {
	t.Helper()
	hA := sc.A.Acquire()
	pB := sc.B.AcquireInBackground().WaitsOn(NodeOf(hA))
	sc.requireACL(t, hA.Path, sc.nodeACL)
	sc.requireACL(t, sc.Parent+"/"+pB.Own, sc.nodeACL)
	return hA, pB
}

// requireACL reads node's ACL back from the server and stops the test
// unless it is asked as the server stores it: the experiment is about the
// ACLs it names, so a node that carries another one shows nothing.
func (sc *ACLScene) requireACL(t *testing.T, node string, asked []zk.ACL) {
	t.Helper()
	want := StoredACL(asked, LockIdentity)
	sc.OLog.Invoke("getACL %s", path.Base(node))
	got, _, err := sc.O.GetACL(node)
	if err != nil {
		sc.OLog.Fail("%v", err)
		t.Fatalf("getACL %s: %v", node, err)
	}
	sc.OLog.Ok("%v", got)
	if !slices.Equal(got, want) {
		claims.NotShown(t, "A1", "%s carries ACL %v on the server; want %v, the ACL asked for (%v)", path.Base(node), got, want, asked)
	}
}

// StoredACL is the ACL the server keeps for asked, created by a session
// authenticated as identity only: the "auth" scheme (creator-only) becomes
// the creator's digest identity.
func StoredACL(asked []zk.ACL, identity string) []zk.ACL {
	user, password, _ := strings.Cut(identity, ":")
	var out []zk.ACL
	for _, a := range asked {
		if a.Scheme == "auth" {
			out = append(out, zk.DigestACL(a.Perms, user, password)...)
			continue
		}
		out = append(out, a)
	}
	return out
}

// Steal is T's delete of A's node.
func (sc *ACLScene) Steal(t *testing.T, node string) error {
	t.Helper()
	ta := claims.NewActor(t, "T")
	ta.Invoke("delete %s (A's node)", path.Base(node))
	err := sc.T.Delete(node, -1)
	if err != nil {
		ta.Fail("%v", err)
	} else {
		ta.Ok("")
	}
	return err
}
