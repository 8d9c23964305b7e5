package zk19_test

// Claim A1 (beyond; article §7 "三个本机场景的证据"): the experiments' open
// ACLs belong on a private instance. On a shared one, any session may
// delete a holder's lock node, and the recipe then hands the lock to the
// next candidate while the holder still holds. What guards a candidate is
// the ACL of its parent: ZooKeeper checks a delete against the parent's
// DELETE permission, not against the node's own ACL.

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/lock"
)

// lockIdentity is the digest identity (user:password) the lock's
// participants share; thiefIdentity is another one.
const (
	lockIdentity  = "locker:locker-secret"
	thiefIdentity = "thief:a-guess"
)

// aclScene is a lock whose parent and candidates carry given ACLs, on the
// shared server: O (authenticated as the lock's participants, so it can
// also clean up behind a creator-only parent), A and B contending, and T,
// a session with a digest identity of its own.
type aclScene struct {
	O, T    *zkclient.Client
	oa      actor
	parent  string
	nodeACL []zk.ACL // the ACL the contenders' Lockers ask for (lock.WithACL)
	a, b    *contender
}

func newACLScene(t *testing.T, parentACL, nodeACL []zk.ACL) *aclScene {
	t.Helper()
	servers := []string{sharedServer(t).Client}
	sc := &aclScene{oa: newActor(t, "O"), nodeACL: nodeACL}
	sc.O = zkclient.Connect(t, "O", servers)
	authenticate(t, sc.O, lockIdentity)
	sc.parent = testRoot(t, sc.O) + "/locks"
	sc.oa.invoke("create %s with ACL %v", sc.parent, parentACL)
	if _, err := sc.O.Create(sc.parent, nil, 0, parentACL); err != nil {
		t.Fatalf("create %s: %v", sc.parent, err)
	}
	sc.oa.ok("")
	sc.requireACL(t, sc.parent, parentACL)
	opts := joinOpts{lock: []lock.Option{lock.WithACL(nodeACL)}}
	sc.a = join(t, "A", servers, sc.parent, opts)
	authenticate(t, sc.a.c, lockIdentity)
	sc.b = join(t, "B", servers, sc.parent, opts)
	authenticate(t, sc.b.c, lockIdentity)
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
func (sc *aclScene) holdAndWait(t *testing.T) (*lock.Held, *acquisition) {
	t.Helper()
	hA := sc.a.acquire()
	pB := sc.b.acquireInBackground().waitsOn(nodeOf(hA))
	sc.requireACL(t, hA.Path, sc.nodeACL)
	sc.requireACL(t, sc.parent+"/"+pB.own, sc.nodeACL)
	return hA, pB
}

// requireACL reads node's ACL back from the server and stops the test
// unless it is asked as the server stores it: the experiment is about the
// ACLs it names, so a node that carries another one shows nothing.
func (sc *aclScene) requireACL(t *testing.T, node string, asked []zk.ACL) {
	t.Helper()
	want := storedACL(asked, lockIdentity)
	sc.oa.invoke("getACL %s", path.Base(node))
	got, _, err := sc.O.GetACL(node)
	if err != nil {
		sc.oa.fail("%v", err)
		t.Fatalf("getACL %s: %v", node, err)
	}
	sc.oa.ok("%v", got)
	if !slices.Equal(got, want) {
		notShown(t, "A1", "%s carries ACL %v on the server; want %v, the ACL asked for (%v)", path.Base(node), got, want, asked)
	}
}

// storedACL is the ACL the server keeps for asked, created by a session
// authenticated as identity only: the "auth" scheme (creator-only) becomes
// the creator's digest identity.
func storedACL(asked []zk.ACL, identity string) []zk.ACL {
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
func (sc *aclScene) steal(t *testing.T, node string) error {
	t.Helper()
	ta := newActor(t, "T")
	ta.invoke("delete %s (A's node)", path.Base(node))
	err := sc.T.Delete(node, -1)
	if err != nil {
		ta.fail("%v", err)
	} else {
		ta.ok("")
	}
	return err
}

// thiefMakesSecondHolder: T deletes A's node, and B, waiting on it,
// acquires while A's hold was never released.
func thiefMakesSecondHolder(t *testing.T, parentACL, nodeACL []zk.ACL) {
	t.Helper()
	sc := newACLScene(t, parentACL, nodeACL)
	hA, pB := sc.holdAndWait(t)
	stolen := sc.steal(t, hA.Path)
	if stolen != nil {
		refutedNow(t, "A1", "T's delete of A's node under parent ACL %v, node ACL %v: got %v; want it to succeed", parentACL, nodeACL, stolen)
	}
	hB, err := pB.resultOr(refutedNow)
	if err != nil {
		refutedNow(t, "A1", "after the theft B's acquisition returned %v; want a hold", err)
	}
	sc.b.a.ok("holds %s", path.Base(hB.Path))
	sc.a.a.info("A never released; its worker still acts on %s", path.Base(hA.Path))
	late := hA.Release(lockCtx(t))
	sc.a.a.info("A's Release, when A gets to it: %v", late)
	evidence(t, "parent ACL %v, node ACL %v (both candidates carry %v on the server): T deleted A's node (err %v); B then held %s while A's hold was never released: two holders; A's later Release reports lost candidacy: %v", parentACL, nodeACL, storedACL(nodeACL, lockIdentity), stolen, path.Base(hB.Path), errors.Is(late, lock.ErrLostCandidacy))
	if !errors.Is(late, lock.ErrLostCandidacy) {
		brokenCheck(t, "A1", "A's Release after the theft returned %v; want lock.ErrLostCandidacy", late)
	}
}

// TestA1_OpenACLLetsAThiefMakeASecondHolder: under an open ACL any session
// deletes the holder's node, and the next candidate then holds too (claim
// A1, §7 ¶6). A creator-only ACL on the candidate nodes alone changes
// nothing: the server checks a delete against the parent's ACL, which is
// open.
func TestA1_OpenACLLetsAThiefMakeASecondHolder(t *testing.T) {
	claim(t, "A1")
	t.Run("an open ACL lets another session delete the holder's node and the next candidate holds too", func(t *testing.T) {
		thiefMakesSecondHolder(t, zk.WorldACL(zk.PermAll), zk.WorldACL(zk.PermAll))
	})
	t.Run("a creator-only ACL on the candidates under an open parent does not stop the thief", func(t *testing.T) {
		thiefMakesSecondHolder(t, zk.WorldACL(zk.PermAll), zk.AuthACL(zk.PermAll))
	})
}

// TestA1_CreatorOnlyACLRefusesTheThief: with a creator-only ACL on the lock
// parent and its candidates, and the participants authenticated with one
// digest identity, a session of another identity gets NoAuth when it
// deletes the holder's node; the node stays, the next candidate keeps
// waiting, and one holder remains (claim A1, §7 ¶6).
func TestA1_CreatorOnlyACLRefusesTheThief(t *testing.T) {
	claim(t, "A1")
	sc := newACLScene(t, zk.AuthACL(zk.PermAll), zk.AuthACL(zk.PermAll))
	hA, pB := sc.holdAndWait(t)
	stolen := sc.steal(t, hA.Path)
	exists, _ := statOf(t, sc.O, hA.Path)
	st := pB.settled()
	evidence(t, "creator-only ACL on the parent and the candidates (both carry %v on the server): T's delete of A's node got %v; A's node exists: %v; B still waits on A: %v, acquired: %v", storedACL(zk.AuthACL(zk.PermAll), lockIdentity), stolen, exists, st.Waiting && st.Pred == path.Base(hA.Path), st.Acquired)
	if !errors.Is(stolen, zk.ErrNoAuth) {
		refuted(t, "A1", "T's delete of A's node got %v; want zk.ErrNoAuth", stolen)
	}
	if !exists || st.Done || !st.Waiting {
		refuted(t, "A1", "after T's attempt A's node exists=%v and B's acquisition done=%v (acquired %v, waiting %v); want A's node kept and B still waiting: one holder", exists, st.Done, st.Acquired, st.Waiting)
	}
	if err := hA.Release(lockCtx(t)); err != nil {
		t.Fatalf("A: release: %v", err)
	}
	if _, err := pB.result(); err != nil {
		t.Fatalf("B after A's release: %v", err)
	}
	sc.b.a.ok("holds after A released")
}
