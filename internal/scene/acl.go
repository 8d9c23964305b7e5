package scene

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/claims"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/lock"
)

// LockIdentity is the digest identity (user:password) the lock's
// participants share; thiefIdentity is another one.
const (
	LockIdentity  = "locker:locker-secret"
	thiefIdentity = "thief:a-guess"
)

// aclScene is a lock whose parent and candidates carry given ACLs, on the
// shared server: O (authenticated as the lock's participants, so it can
// also clean up behind a creator-only parent), A and B contending, and T,
// a session with a digest identity of its own.
type aclScene struct {
	O, T    *zkclient.Client
	oa      claims.Actor
	parent  string
	nodeACL []zk.ACL // the ACL the contenders' Lockers ask for (lock.WithACL)
	a, B    *Contender
}

func NewACLScene(t *testing.T, parentACL, nodeACL []zk.ACL) *aclScene {
	t.Helper()
	servers := []string{SharedServer(t).Client}
	sc := &aclScene{oa: claims.NewActor(t, "O"), nodeACL: nodeACL}
	sc.O = zkclient.Connect(t, "O", servers)
	authenticate(t, sc.O, LockIdentity)
	sc.parent = TestRoot(t, sc.O) + "/locks"
	sc.oa.Invoke("create %s with ACL %v", sc.parent, parentACL)
	if _, err := sc.O.Create(sc.parent, nil, 0, parentACL); err != nil {
		t.Fatalf("create %s: %v", sc.parent, err)
	}
	sc.oa.Ok("")
	sc.requireACL(t, sc.parent, parentACL)
	opts := JoinOpts{Lock: []lock.Option{lock.WithACL(nodeACL)}}
	sc.a = Join(t, "A", servers, sc.parent, opts)
	authenticate(t, sc.a.Session, LockIdentity)
	sc.B = Join(t, "B", servers, sc.parent, opts)
	authenticate(t, sc.B.Session, LockIdentity)
	sc.T = zkclient.Connect(t, "T", servers)
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

// holdAndWait: A holds; B waits on A's node. Both candidates carry the
// ACL their Lockers asked for, as O reads it back from the server.
func (sc *aclScene) HoldAndWait(t *testing.T) (*lock.Held, *Acquisition) {
	t.Helper()
	hA := sc.a.Acquire()
	pB := sc.B.AcquireInBackground().WaitsOn(NodeOf(hA))
	sc.requireACL(t, hA.Path, sc.nodeACL)
	sc.requireACL(t, sc.parent+"/"+pB.Own, sc.nodeACL)
	return hA, pB
}

// requireACL reads node's ACL back from the server and stops the test
// unless it is asked as the server stores it: the experiment is about the
// ACLs it names, so a node that carries another one shows nothing.
func (sc *aclScene) requireACL(t *testing.T, node string, asked []zk.ACL) {
	t.Helper()
	want := StoredACL(asked, LockIdentity)
	sc.oa.Invoke("getACL %s", path.Base(node))
	got, _, err := sc.O.GetACL(node)
	if err != nil {
		sc.oa.Fail("%v", err)
		t.Fatalf("getACL %s: %v", node, err)
	}
	sc.oa.Ok("%v", got)
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

// steal is T's delete of A's node.
func (sc *aclScene) Steal(t *testing.T, node string) error {
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

// thiefMakesSecondHolder: T deletes A's node, and B, waiting on it,
// acquires while A's hold was never released.
func ThiefMakesSecondHolder(t *testing.T, parentACL, nodeACL []zk.ACL) {
	t.Helper()
	sc := NewACLScene(t, parentACL, nodeACL)
	hA, pB := sc.HoldAndWait(t)
	stolen := sc.Steal(t, hA.Path)
	if stolen != nil {
		claims.RefutedNow(t, "A1", "T's delete of A's node under parent ACL %v, node ACL %v: got %v; want it to succeed", parentACL, nodeACL, stolen)
	}
	hB, err := pB.ResultOr(claims.RefutedNow)
	if err != nil {
		claims.RefutedNow(t, "A1", "after the theft B's acquisition returned %v; want a hold", err)
	}
	sc.B.Log.Ok("holds %s", path.Base(hB.Path))
	sc.a.Log.Info("A never released; its worker still acts on %s", path.Base(hA.Path))
	late := hA.Release(LockCtx(t))
	sc.a.Log.Info("A's Release, when A gets to it: %v", late)
	claims.Evidence(t, "parent ACL %v, node ACL %v (both candidates carry %v on the server): T deleted A's node (err %v); B then held %s while A's hold was never released: two holders; A's later Release reports lost candidacy: %v", parentACL, nodeACL, StoredACL(nodeACL, LockIdentity), stolen, path.Base(hB.Path), errors.Is(late, lock.ErrLostCandidacy))
	if !errors.Is(late, lock.ErrLostCandidacy) {
		claims.BrokenCheck(t, "A1", "A's Release after the theft returned %v; want lock.ErrLostCandidacy", late)
	}
}
