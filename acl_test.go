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
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/claims"
	"github.com/zk19/zk19/internal/scene"
)

// TestA1_OpenACLLetsAThiefMakeASecondHolder: under an open ACL any session
// deletes the holder's node, and the next candidate then holds too (claim
// A1, §7 ¶6). A creator-only ACL on the candidate nodes alone changes
// nothing: the server checks a delete against the parent's ACL, which is
// open.
func TestA1_OpenACLLetsAThiefMakeASecondHolder(t *testing.T) {
	claims.Open(t, "A1")
	t.Run("an open ACL lets another session delete the holder's node and the next candidate holds too", func(t *testing.T) {
		scene.ThiefMakesSecondHolder(t, zk.WorldACL(zk.PermAll), zk.WorldACL(zk.PermAll))
	})
	t.Run("a creator-only ACL on the candidates under an open parent does not stop the thief", func(t *testing.T) {
		scene.ThiefMakesSecondHolder(t, zk.WorldACL(zk.PermAll), zk.AuthACL(zk.PermAll))
	})
}

// TestA1_CreatorOnlyACLRefusesTheThief: with a creator-only ACL on the lock
// parent and its candidates, and the participants authenticated with one
// digest identity, a session of another identity gets NoAuth when it
// deletes the holder's node; the node stays, the next candidate keeps
// waiting, and one holder remains (claim A1, §7 ¶6).
func TestA1_CreatorOnlyACLRefusesTheThief(t *testing.T) {
	claims.Open(t, "A1")
	sc := scene.NewACLScene(t, zk.AuthACL(zk.PermAll), zk.AuthACL(zk.PermAll))
	hA, pB := sc.HoldAndWait(t)
	stolen := sc.Steal(t, hA.Path)
	exists, _ := scene.StatOf(t, sc.O, hA.Path)
	st := pB.Settled()
	claims.Evidence(t, "creator-only ACL on the parent and the candidates (both carry %v on the server): T's delete of A's node got %v; A's node exists: %v; B still waits on A: %v, acquired: %v", scene.StoredACL(zk.AuthACL(zk.PermAll), scene.LockIdentity), stolen, exists, st.Waiting && st.Pred == path.Base(hA.Path), st.Acquired)
	if !errors.Is(stolen, zk.ErrNoAuth) {
		claims.Refuted(t, "A1", "T's delete of A's node got %v; want zk.ErrNoAuth", stolen)
	}
	if !exists || st.Done || !st.Waiting {
		claims.Refuted(t, "A1", "after T's attempt A's node exists=%v and B's acquisition done=%v (acquired %v, waiting %v); want A's node kept and B still waiting: one holder", exists, st.Done, st.Acquired, st.Waiting)
	}
	if err := hA.Release(scene.LockCtx(t)); err != nil {
		t.Fatalf("A: release: %v", err)
	}
	if _, err := pB.Result(); err != nil {
		t.Fatalf("B after A's release: %v", err)
	}
	sc.B.A.Ok("holds after A released")
}
