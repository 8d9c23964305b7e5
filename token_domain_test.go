package zk19_test

// §6 of the article (顺序号只在明确的锁域内比较): a sequence number is a token
// only inside its lock domain. T1 to T5, in the order the article states
// them: malformed suffixes are rejected, a recreated parent or a wiped
// ensemble restarts the numbering, czxid is no unique token, and a reset
// mark lets the old holder in.

import (
	"context"
	"errors"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"math"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/fencescene"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/scene"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
)

// TestT1_MalformedSuffixesAreRejected: the token is the sequence suffix of a
// lock node's name; negative, overflowing, non-numeric, short (fewer than
// the 10 digits ZooKeeper writes) and missing suffixes are refused with a
// clear error (claim T1, §6 ¶1).
func TestT1_MalformedSuffixesAreRejected(t *testing.T) {
	claims.Open(t, "T1")
	for name, want := range map[string]error{
		"g-lock--000000001":  fence.ErrNegativeSeq,
		"g-lock-2147483648":  fence.ErrSeqOverflow,
		"g-lock-99999999999": fence.ErrSeqOverflow,
		"g-lock-00000000x1":  fence.ErrNotNumeric,
		"g-lock-":            fence.ErrNoSuffix,
		"g-0000000001":       fence.ErrNoSuffix,
		"g-lock-7":           fence.ErrShortSeq,
		"g-lock-000000007":   fence.ErrShortSeq,
	} {
		_, err := fence.ParseSeq(name)
		t.Logf("%-20q -> %v", name, err)
		if !errors.Is(err, want) {
			claims.Refuted(t, "T1", "%q gave %v; want %v", name, err, want)
		}
	}
	v, err := fence.ParseSeq("g-lock-2147483647")
	claims.Evidence(t, "negative, overflowing, non-numeric, short and missing suffixes rejected with their errors; the largest suffix parses to %d (%v)", v, err)
	if err != nil || v != 2147483647 {
		claims.Refuted(t, "T1", "the largest suffix gave %d, %v; want 2147483647", v, err)
	}
}

// TestT2_RecreatedParentRestartsNumbering: deleting and recreating the lock
// parent restarts the sequence at 0, so a resource that kept the old
// domain's mark rejects every new holder; a token that carries the parent's
// czxid as its domain, compared first, is accepted (claim T2, §6 ¶2).
//
// The two czxids a run gets are whatever the server counted to, most often
// of one width, where comparing domains as numbers and as text agree. So
// the domain comparison is proven first with domains the test chooses,
// where the two disagree or where int64 ends: 9 then 10, math.MaxInt64-1
// then math.MaxInt64, -1 then 0 and math.MinInt64 then math.MinInt64+1
// (fence.Token's doc puts no bound on Domain, an int64: a generation the
// operator assigns may start anywhere).
func TestT2_RecreatedParentRestartsNumbering(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "T2")
	for _, d := range []struct {
		name   string
		lo, hi int64
	}{
		{"9 before 10", 9, 10},
		{"math.MaxInt64-1 before math.MaxInt64", math.MaxInt64 - 1, math.MaxInt64},
		{"-1 before 0", -1, 0},
		{"math.MinInt64 before math.MinInt64+1", math.MinInt64, math.MinInt64 + 1},
	} {
		fencescene.OnEachResource(t, "orders domain "+d.name+" whatever the sequence", func(t *testing.T, kind string, res fencescene.FencedResource) {
			// The old domain's mark has the largest sequence a lock node
			// can carry, the new holder the first.
			// Both of one lock: Token{Domain: 0, Seq: 0} without a lock would be the zero Token, which no resource takes.
			lockID := fence.LockID("/t2")
			old, next := fence.Token{Lock: lockID, Domain: d.lo, Seq: math.MaxInt32}, fence.Token{Lock: lockID, Domain: d.hi, Seq: 0}
			A, B := claims.NewActor(t, "A"), claims.NewActor(t, "B")
			fencescene.WriteAs(t, A, res, old, "old-domain")
			nb := fencescene.WriteAs(t, B, res, next, "new-domain")
			late := fencescene.WriteAs(t, A, res, old, "old-domain-late")
			value, mark, _ := fencescene.ReadResource(t, res)
			claims.Evidence(t, "%s resource: after mark %v, the new domain's %v accepted=%v; the old domain's %v then accepted=%v; value %q, mark %v", fencescene.KindText(kind), old, next, nb.Accepted, old, late.Accepted, value, mark)
			if !nb.Accepted || late.Accepted || value != "new-domain" || mark != next {
				claims.Refuted(t, "T2", "the %s resource, domain %s: got the new holder %v accepted=%v over mark %v, then the old %v accepted=%v, value %q, mark %v; want the new accepted, the old refused, \"new-domain\" with mark %v", fencescene.KindText(kind), d.name, next, nb.Accepted, old, old, late.Accepted, value, mark, next)
			}
		})
	}
	ctx := context.Background()
	s := harness.SharedServer(t)
	A := zkclient.Connect(t, "A", []string{s.Client})
	root := harness.TestRoot(t, A)
	parent := root + "/locks"
	acquireSeqs := func(n int) []fence.Token {
		if _, err := A.Create(parent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		l := lock.New(A.Conn, parent, lock.WithCzxidDomain())
		var out []fence.Token
		for i := 0; i < n; i++ {
			h, err := l.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, h.Token)
			if err := h.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	oldDomain := acquireSeqs(3)
	if err := A.Delete(parent, -1); err != nil {
		t.Fatal(err)
	}
	t.Logf("parent %s deleted and recreated", parent)
	newDomain := acquireSeqs(1)
	claims.Evidence(t, "tokens before the parent was recreated: %v; after: %v", oldDomain, newDomain)
	if newDomain[0].Seq != 0 {
		claims.RefutedNow(t, "T2", "the recreated parent numbered the first candidate %d; want 0", newDomain[0].Seq)
	}
	oldMark, newHolder := oldDomain[2], newDomain[0]
	fencescene.OnEachResource(t, "that kept the old domain's mark and compares sequences only rejects every new holder", func(t *testing.T, kind string, res fencescene.FencedResource) {
		fencescene.WriteAs(t, claims.NewActor(t, "A"), res, fencescene.SeqOnly(oldMark), "old-domain")
		r := fencescene.WriteAs(t, claims.NewActor(t, "B"), res, fencescene.SeqOnly(newHolder), "new-domain")
		claims.Evidence(t, "%s resource, sequences only: new holder seq %d after the old mark seq %d accepted=%v", fencescene.KindText(kind), newHolder.Seq, oldMark.Seq, r.Accepted)
		if r.Accepted {
			claims.Refuted(t, "T2", "the %s resource: new holder seq %d accepted over old mark seq %d; want rejected", fencescene.KindText(kind), newHolder.Seq, oldMark.Seq)
		}
	})
	fencescene.OnEachResource(t, "that compares the parent's czxid first accepts the new domain", func(t *testing.T, kind string, res fencescene.FencedResource) {
		fencescene.WriteAs(t, claims.NewActor(t, "A"), res, oldMark, "old-domain")
		r := fencescene.WriteAs(t, claims.NewActor(t, "B"), res, newHolder, "new-domain")
		claims.Evidence(t, "%s resource, czxid first: new holder %v after the old mark %v accepted=%v", fencescene.KindText(kind), newHolder, oldMark, r.Accepted)
		if newHolder.Domain <= oldMark.Domain || !r.Accepted {
			claims.Refuted(t, "T2", "the %s resource: new token %v vs old mark %v accepted=%v; want a larger domain, accepted", fencescene.KindText(kind), newHolder, oldMark, r.Accepted)
		}
	})
}

// TestT4_ResetMarkLetsTheOldHolderIn: clearing the high-water mark is not a
// domain rule (claim T4, §6 ¶2). Real acquisitions on a real server: two
// holders come and go, A holds with token 2 and writes; A's worker keeps
// the token. The operator deletes the lock parent (A's node with it) and
// creates it again; B holds with token 0 of the new parent. A resource
// that compares sequences only and clears its mark when the parent is
// recreated accepts B, and then A's late write with token 2 again, over
// B's. A resource that compares the parent's czxid (lock.WithCzxidDomain)
// first, and clears nothing, accepts B and refuses A.
func TestT4_ResetMarkLetsTheOldHolderIn(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "T4")
	s := harness.SharedServer(t)
	O := zkclient.Connect(t, "O", []string{s.Client})
	oa := claims.NewActor(t, "O")
	parent := harness.TestRoot(t, O) + "/locks"
	createParent := func() {
		oa.Invoke("create %s", parent)
		if _, err := O.Create(parent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", parent, err)
		}
		_, st := scene.StatOf(t, O, parent)
		oa.Ok("czxid 0x%x", st.Czxid)
	}
	domainOpts := scene.JoinOpts{Lock: []lock.Option{lock.WithCzxidDomain()}}
	claims.Phase(t, "the first parent: two holders come and go, then A holds")
	createParent()
	a := scene.Join(t, "A", []string{s.Client}, parent, domainOpts)
	for range 2 {
		if err := a.Acquire().Release(scene.LockCtx(t)); err != nil {
			t.Fatalf("A: release: %v", err)
		}
	}
	tokA := a.Acquire().Token
	a.Log.Info("A's worker keeps token %v and pauses", tokA)
	claims.Phase(t, "the operator deletes the lock parent, A's node with it, and creates it again")
	oa.Invoke("delete %s and everything below it", parent)
	if err := harness.DeleteTree(O.Conn, parent); err != nil {
		t.Fatalf("delete %s: %v", parent, err)
	}
	oa.Ok("")
	createParent()
	b := scene.Join(t, "B", []string{s.Client}, parent, domainOpts)
	hb := b.Acquire()
	tokB := hb.Token
	claims.Evidence(t, "A held %v under the first parent; B holds %v under the recreated one", tokA, tokB)
	if tokB.Seq != 0 || tokA.Seq != 2 || tokB.Domain <= tokA.Domain {
		claims.NotShown(t, "T4", "A %v, B %v; want A sequence 2, B sequence 0 and a larger czxid for B", tokA, tokB)
	}
	fencescene.OnEachResource(t, "that clears its mark when the parent is recreated accepts the old holder's late write again", func(t *testing.T, kind string, res fencescene.FencedResource) {
		pa, pb := claims.NewActor(t, "A"), claims.NewActor(t, "B")
		fencescene.WriteAs(t, pa, res, fencescene.SeqOnly(tokA), "A-first")
		oa := claims.NewActor(t, "O")
		oa.Invoke("clear the resource's mark: the parent was recreated")
		if err := fencescene.ClearMark(context.Background(), res); err != nil {
			t.Fatalf("clear the mark: %v", err)
		}
		oa.Ok("")
		bw := fencescene.WriteAs(t, pb, res, fencescene.SeqOnly(tokB), "new-owner")
		late := fencescene.WriteAs(t, pa, res, fencescene.SeqOnly(tokA), "stale-late")
		v, _, _ := fencescene.ReadResource(t, res)
		claims.Evidence(t, "%s resource, mark cleared, sequences only: B's seq %d accepted=%v; then A's late seq %d accepted=%v over %q; value %q", fencescene.KindText(kind), tokB.Seq, bw.Accepted, tokA.Seq, late.Accepted, late.Prev, v)
		if !bw.Accepted || !late.Accepted || v != "stale-late" {
			claims.Refuted(t, "T4", "the %s resource: after clearing the mark B accepted=%v, A's late write accepted=%v, value %q; want both accepted and A's \"stale-late\" over B's write", fencescene.KindText(kind), bw.Accepted, late.Accepted, v)
		}
	})
	fencescene.OnEachResource(t, "that compares the parent's czxid first refuses the old holder's late write", func(t *testing.T, kind string, res fencescene.FencedResource) {
		pa, pb := claims.NewActor(t, "A"), claims.NewActor(t, "B")
		fencescene.WriteAs(t, pa, res, tokA, "A-first")
		bw := fencescene.WriteAs(t, pb, res, tokB, "new-owner")
		late := fencescene.WriteAs(t, pa, res, tokA, "stale-late")
		v, _, _ := fencescene.ReadResource(t, res)
		claims.Evidence(t, "%s resource, czxid first, nothing cleared: B's %v accepted=%v; then A's late %v accepted=%v; value %q", fencescene.KindText(kind), tokB, bw.Accepted, tokA, late.Accepted, v)
		if !bw.Accepted || late.Accepted || v != "new-owner" {
			claims.Refuted(t, "T4", "the %s resource: B's %v accepted=%v, A's late %v accepted=%v, value %q; want B accepted, A refused, \"new-owner\"", fencescene.KindText(kind), tokB, bw.Accepted, tokA, late.Accepted, v)
		}
	})
	claims.Phase(t, "B releases; A's Locker, made under the first parent, acquires under the new one")
	if err := hb.Release(scene.LockCtx(t)); err != nil {
		t.Fatalf("B: release: %v", err)
	}
	again := a.Acquire().Token
	claims.Evidence(t, "A's Locker, made under the first parent, now holds %v; B held %v", again, tokB)
	if again.Domain != tokB.Domain {
		claims.Refuted(t, "T4", "A's long-lived Locker holds %v under the recreated parent; want the new parent's czxid 0x%x as its domain", again, tokB.Domain)
	}
}

// TestT3_CzxidIsNotAUniqueToken: a node's creation zxid cannot serve as a
// unique token, because every create inside one multi transaction gets the
// same czxid (claim T3, §6 ¶3). Two creates in one multi,
// then a third on its own: the first two share czxid, the third differs.
func TestT3_CzxidIsNotAUniqueToken(t *testing.T) {
	s := harness.SharedServer(t)
	claims.Open(t, "T3")
	a := zkclient.Connect(t, "A", []string{s.Client})
	root := harness.TestRoot(t, a)
	pa := claims.NewActor(t, "A")
	acl := zk.WorldACL(zk.PermAll)
	pa.Invoke("multi [create %s/one, create %s/two]", root, root)
	if _, err := a.Multi(
		&zk.CreateRequest{Path: root + "/one", Acl: acl},
		&zk.CreateRequest{Path: root + "/two", Acl: acl},
	); err != nil {
		t.Fatalf("multi: %v", err)
	}
	pa.Ok("")
	pa.Invoke("create %s/three", root)
	if _, err := a.Create(root+"/three", nil, 0, acl); err != nil {
		t.Fatalf("create: %v", err)
	}
	pa.Ok("")
	czxid := map[string]int64{}
	for _, n := range []string{"one", "two", "three"} {
		_, st, err := a.Get(root + "/" + n)
		if err != nil {
			t.Fatalf("get %s: %v", n, err)
		}
		czxid[n] = st.Czxid
	}
	claims.Evidence(t, "czxid of the two creates in one multi: 0x%x and 0x%x; of the create on its own: 0x%x", czxid["one"], czxid["two"], czxid["three"])
	if czxid["one"] != czxid["two"] {
		claims.Refuted(t, "T3", "the two creates of one multi got czxid 0x%x and 0x%x; want equal", czxid["one"], czxid["two"])
	}
	if czxid["three"] == czxid["one"] {
		claims.BrokenCheck(t, "T3", "a separate create got the multi's czxid 0x%x; want a new one", czxid["three"])
	}
}

// TestT5_WipedEnsembleRestartsNumberingAndZxids: replacing the ensemble
// changes the domain (claim T5, §6 ¶3; beyond the article). A holds under
// /locks with the parent's czxid as its domain, and its worker keeps the
// token. The server's data is wiped and it starts again, as a replaced
// ensemble would; its zxids count from the start, the same steps create
// /locks again, and B holds there. The parent's czxid repeats or goes
// back, so a resource that trusts it as the domain cannot order A and B:
// it refuses B, or it takes A's late write after B's. What survives is a
// generation outside ZooKeeper's numbering, assigned by the operator and
// raised at every change of the domain (here: per incarnation), compared
// first.
func TestT5_WipedEnsembleRestartsNumberingAndZxids(t *testing.T) {
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a server of its own, whose data it wipes before starting it again"))
	claims.Open(t, "T5")
	s := zkserver.Start(t)
	claims.Phase(t, "the first incarnation: A holds under %s; its worker keeps the token", fencescene.WipedParent)
	o1, a, tokA := fencescene.HoldOnFreshServer(t, s, "O1", "A")
	claims.Phase(t, "the old ensemble's clients go with it; the server's data is wiped and it starts again")
	for _, c := range []*zkclient.Client{a.Session, o1} {
		if err := c.CloseWait(harness.Within); err != nil {
			t.Fatalf("close %s: %v", c.Name, err)
		}
	}
	before := fencescene.ServerZxid(t, s)
	s.RestartWiped(t)
	after := fencescene.ServerZxid(t, s)
	t.Logf("server zxid before the wipe 0x%x, after it 0x%x", before, after)
	claims.Phase(t, "the second incarnation: the same steps, and B holds under %s", fencescene.WipedParent)
	_, _, tokB := fencescene.HoldOnFreshServer(t, s, "O2", "B")
	claims.Evidence(t, "server zxid 0x%x before the wipe, 0x%x after it; the parent's czxid 0x%x, then 0x%x; A's token %v, B's token %v", before, after, tokA.Domain, tokB.Domain, tokA, tokB)
	if after >= before || tokB.Domain > tokA.Domain || tokB.Seq != 0 {
		claims.RefutedNow(t, "T5", "zxid 0x%x after the wipe (0x%x before), czxid 0x%x after (0x%x before), B's sequence %d; want zxids from the start, a czxid that repeats or goes back, sequence 0", after, before, tokB.Domain, tokA.Domain, tokB.Seq)
	}
	fencescene.OnEachResource(t, "that trusts the parent's czxid as the domain no longer orders the old holder before the new", func(t *testing.T, kind string, res fencescene.FencedResource) {
		bw, late, v := fencescene.WritesAcrossTheWipe(t, res, tokA, tokB)
		claims.Evidence(t, "%s resource trusting czxid: B's %v accepted=%v; A's late %v accepted=%v; value %q", fencescene.KindText(kind), tokB, bw.Accepted, tokA, late.Accepted, v)
		if bw.Accepted && !late.Accepted {
			claims.Refuted(t, "T5", "the %s resource: with czxid 0x%x after the wipe and 0x%x before, B's %v was accepted and A's late %v refused; want the czxid domain to fail one of them", fencescene.KindText(kind), tokB.Domain, tokA.Domain, tokB, tokA)
		}
	})
	fencescene.OnEachResource(t, "that compares a generation the operator assigns per incarnation first refuses the old holder", func(t *testing.T, kind string, res fencescene.FencedResource) {
		oldTok, newTok := fence.Token{Lock: tokA.Lock, Domain: 1, Seq: tokA.Seq}, fence.Token{Lock: tokB.Lock, Domain: 2, Seq: tokB.Seq}
		bw, late, v := fencescene.WritesAcrossTheWipe(t, res, oldTok, newTok)
		claims.Evidence(t, "%s resource, operator's generation first: B's %v accepted=%v; A's late %v accepted=%v; value %q", fencescene.KindText(kind), newTok, bw.Accepted, oldTok, late.Accepted, v)
		if !bw.Accepted || late.Accepted || v != "new-owner" {
			claims.Refuted(t, "T5", "the %s resource: B's %v accepted=%v, A's late %v accepted=%v, value %q; want B accepted, A refused, \"new-owner\"", fencescene.KindText(kind), newTok, bw.Accepted, oldTok, late.Accepted, v)
		}
	})
}
