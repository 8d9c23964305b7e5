package lock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"testing"
	"time"
	"weak"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/server/tb"
)

// TestOrderBySequenceNotName: the whole-name order of these candidates is
// the reverse of their sequence order; order must follow the sequence
// (claim L2), skip children without the infix, and keep 10-digit suffixes
// that string comparison would also order correctly in line with numbers.
func TestOrderBySequenceNotName(t *testing.T) {
	kids := []string{
		"aaaa-lock-0000000002",
		"ready",
		"cccc-lock-0000000000",
		"bbbb-lock-0000000001",
		"config-node",
		"0000-lock-0000000010",
	}
	got, err := order(kids)
	if err != nil {
		t.Fatalf("order: %v", err)
	}
	want := []entry{{"cccc-lock-0000000000", 0}, {"bbbb-lock-0000000001", 1}, {"aaaa-lock-0000000002", 2}, {"0000-lock-0000000010", 10}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v; want %v", got, want)
	}
	byName := append([]string(nil), kids...)
	sort.Strings(byName)
	if byName[0] == want[0].name {
		t.Fatalf("test data: name order should not start with the lowest sequence")
	}
}

func TestOrderRejectsMalformedCandidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		want error
	}{
		{"x-lock-", fence.ErrNoSuffix},
		{"x-lock--000000001", fence.ErrNegativeSeq},
		{"x-lock-00000000a1", fence.ErrNotNumeric},
		{"x-lock-99999999999", fence.ErrSeqOverflow},
		{"x-lock-2147483648", fence.ErrSeqOverflow},
		{"x-lock-12", fence.ErrShortSeq},
	} {
		_, err := order([]string{"ok-lock-0000000000", tc.name})
		if !errors.Is(err, errMalformed) || !errors.Is(err, tc.want) {
			t.Errorf("order(%q): got %v; want errMalformed and %v", tc.name, err, tc.want)
		}
	}
	_, err := order([]string{"a-lock-0000000003", "b-lock-0000000003"})
	if !errors.Is(err, errMalformed) {
		t.Errorf("duplicate sequence: got %v; want errMalformed", err)
	}
}

// TestDecideWatchesTheImmediatePredecessor: the lowest holds, every other
// candidate watches the one right before it by sequence, and a candidate
// missing from the list has lost its candidacy (claims L3 and L6).
func TestDecideWatchesTheImmediatePredecessor(t *testing.T) {
	ord, err := order([]string{"c-lock-0000000002", "a-lock-0000000000", "b-lock-0000000001"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		own, pred string
		lost      bool
	}{
		{"a-lock-0000000000", "", false},
		{"b-lock-0000000001", "a-lock-0000000000", false},
		{"c-lock-0000000002", "b-lock-0000000001", false},
		{"d-lock-0000000003", "", true},
	} {
		a := &attempt{l: &Locker{parent: "/p"}, own: tc.own}
		pred, err := a.decide(ord)
		if pred != tc.pred || errors.Is(err, ErrLostCandidacy) != tc.lost {
			t.Errorf("decide(%s): got %q, %v; want %q, lost=%v", tc.own, pred, err, tc.pred, tc.lost)
		}
	}
}

// TestRecoverErrorListsWhatItFound: the ambiguity and missing errors name
// every match, in sequence order, and say which were not adopted.
func TestRecoverErrorListsWhatItFound(t *testing.T) {
	owned := []string{"g-lock-0000000010", "g-lock-0000000002"}
	sortBySeq(owned)
	err := error(&RecoverError{GUID: "g", Kind: ErrAmbiguous, Owned: owned, Foreign: []string{"g-lock-0000000005"}})
	want := ErrAmbiguous.Error() + ": GUID g; owned by this session: g-lock-0000000002, g-lock-0000000010; owned by other sessions (not adopted): g-lock-0000000005"
	if !errors.Is(err, ErrAmbiguous) || err.Error() != want {
		t.Errorf("got %q; want %q wrapping ErrAmbiguous", err, want)
	}
}

// A RecoverError names only the lists that have nodes.
func TestRecoverErrorNamesOnlyWhatItFound(t *testing.T) {
	err := error(&RecoverError{GUID: "g", Kind: ErrMissing})
	if want := ErrMissing.Error() + ": GUID g"; err.Error() != want {
		t.Errorf("got %q; want %q", err, want)
	}
}

// Recover refuses a GUID that cannot be the GUID part of a candidate's
// name before it talks to a server (the Locker here has no connection).
func TestRecoverRefusesAnUnusableGUID(t *testing.T) {
	l := New(nil, "/p")
	for _, guid := range []string{"", "a/b", "a\x00b", "a-lock-b", "-lock-"} {
		if _, err := l.Recover(context.Background(), guid); !errors.Is(err, errBadGUID) {
			t.Errorf("Recover(%q): got %v; want errBadGUID", guid, err)
		}
	}
}

// sortBySeq orders by sequence number, keeps names with equal numbers in
// their order, and puts names without a number last, in their order.
func TestSortBySeq(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"x-lock-0000000010", "y-lock-0000000002"}, []string{"y-lock-0000000002", "x-lock-0000000010"}},
		{[]string{"bad", "x-lock-0000000002", "worse", "y-lock-0000000001"}, []string{"y-lock-0000000001", "x-lock-0000000002", "bad", "worse"}},
		{[]string{"b-lock-0000000003", "a-lock-0000000003", "c-lock-0000000003"}, []string{"b-lock-0000000003", "a-lock-0000000003", "c-lock-0000000003"}},
	} {
		got := slices.Clone(c.in)
		sortBySeq(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("sortBySeq(%q): got %q; want %q", c.in, got, c.want)
		}
	}
}

// TestCreateErrorSaysWhatRecoveryFound: a CreateError names the create's
// error, then, when there was one, why recovery did not adopt a node, what
// it found and deleted, and why not all were deleted; errors.Is finds each
// cause. Without a recovery's answer it says nothing of one.
func TestCreateErrorSaysWhatRecoveryFound(t *testing.T) {
	cleanup := errors.New("the cleanup's cause")
	err := error(&CreateError{GUID: "g", Err: zk.ErrConnectionClosed, Recovery: ErrAmbiguous,
		Owned: []string{"g-lock-0000000002", "g-lock-0000000010"}, Deleted: []string{"g-lock-0000000002"}, Cleanup: cleanup})
	want := "lock: create of candidate g: " + zk.ErrConnectionClosed.Error() + "; recovery: " + ErrAmbiguous.Error() +
		"; owned by this session: g-lock-0000000002, g-lock-0000000010; deleted: g-lock-0000000002; not all deleted: the cleanup's cause"
	if err.Error() != want || !errors.Is(err, zk.ErrConnectionClosed) || !errors.Is(err, ErrAmbiguous) || !errors.Is(err, cleanup) {
		t.Errorf("got %q; want %q wrapping the create's error, ErrAmbiguous and the cleanup's cause", err, want)
	}
	plain := error(&CreateError{GUID: "g", Err: zk.ErrNoNode})
	if want := "lock: create of candidate g: " + zk.ErrNoNode.Error(); plain.Error() != want || errors.Is(plain, ErrAmbiguous) {
		t.Errorf("got %q; want %q, wrapping no recovery's answer", plain, want)
	}
}

// TestALockerForgetsAHoldThatEnded: the nodes a Locker counts as its live
// holds' are those of holds not yet over. A hold that ended is forgotten:
// Recover may then clean up its node if it is still there, and a Locker
// that lives for many holds does not keep them all.
func TestALockerForgetsAHoldThatEnded(t *testing.T) {
	l := New(nil, "/p")
	l.track("/p/a", true)
	l.track("/p/b", true)
	if got := l.unheld([]string{"a", "b", "c"}); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("with the holds of a and b live: got unheld %v; want [c]", got)
	}
	l.track("/p/a", false)
	if got := l.unheld([]string{"a", "b", "c"}); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("after a's hold ended: got unheld %v; want [a c]", got)
	}
	if len(l.holding) != 1 {
		t.Errorf("after a's hold ended: got %d nodes counted as held; want 1", len(l.holding))
	}
}

// TestSessionErrorSaysItsCause: the error of a changed session names both
// sessions and, when the change was seen as a dropped watch, the cause,
// which errors.Is finds beside ErrSessionChanged; without a cause (a
// session ID compared) it says no more and wraps ErrSessionChanged alone.
func TestSessionErrorSaysItsCause(t *testing.T) {
	plain := error(&sessionError{pinned: 0x10, now: 0x20})
	if want := "lock: session changed: pinned 0x10, connection now has 0x20"; plain.Error() != want || !errors.Is(plain, ErrSessionChanged) || errors.Is(plain, zk.ErrSessionExpired) {
		t.Errorf("without a cause: got %q; want %q wrapping ErrSessionChanged and not zk.ErrSessionExpired", plain, want)
	}
	caused := error(&sessionError{pinned: 0x10, now: 0x20, cause: zk.ErrSessionExpired})
	if want := "lock: session changed: pinned 0x10, connection now has 0x20 (" + zk.ErrSessionExpired.Error() + ")"; caused.Error() != want || !errors.Is(caused, ErrSessionChanged) || !errors.Is(caused, zk.ErrSessionExpired) {
		t.Errorf("with a cause: got %q; want %q wrapping ErrSessionChanged and zk.ErrSessionExpired", caused, want)
	}
}

// TestAnExpiredSessionsConnectReplyKeepsTheTimeout: the connect reply of
// a session the server had expired carries timeOut 0 (go-zookeeper then
// opens a new session); it negotiates nothing, so the timeout the Locker
// knows stays what the last session's reply said, and a first reply of
// 0 leaves it unknown. A reply with a timeout sets it.
func TestAnExpiredSessionsConnectReplyKeepsTheTimeout(t *testing.T) {
	connectReply := func(ms int32) []byte {
		head := make([]byte, 8) // protocolVersion, then timeOut
		head[4], head[5], head[6], head[7] = byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
		return head
	}
	lk := &link{}
	(&timedConn{lk: lk, sent: []time.Time{time.Now()}}).replied(connectReply(0))
	if _, got, ok := lk.last(); ok || got != 0 {
		t.Errorf("after a first connect reply with timeOut 0: got timeout %v (known: %v); want none known", got, ok)
	}
	(&timedConn{lk: lk, sent: []time.Time{time.Now()}}).replied(connectReply(4000))
	(&timedConn{lk: lk, sent: []time.Time{time.Now()}}).replied(connectReply(0))
	if _, got, ok := lk.last(); !ok || got != 4*time.Second {
		t.Errorf("after a session's reply of 4000 ms, then an expired one's of 0: got timeout %v (known: %v); want 4s", got, ok)
	}
}

// TestAConnectionsLinkGoesWithIt: Connect keeps each connection's link
// in a table keyed by a weak pointer; once the connection is unreachable
// and collected, its entry goes too, so a process that connects many
// times keeps none of the old links.
func TestAConnectionsLinkGoesWithIt(t *testing.T) {
	conn, _, err := Connect([]string{"127.0.0.1:1"}, time.Second, nil, zk.WithLogInfo(false))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	key := weak.Make(conn)
	listed := func() bool {
		links.Lock()
		defer links.Unlock()
		_, ok := links.m[key]
		return ok
	}
	if !listed() {
		t.Fatalf("after Connect: got no link for the connection; want one")
	}
	conn.Close()
	conn = nil
	tb.WaitFor(t, 10*time.Second, "the closed connection's link to go with it", func() (bool, string) {
		runtime.GC()
		return !listed(), fmt.Sprintf("listed: %v (collected: %v)", listed(), key.Value() == nil)
	})
}

// TestAFrameIsSeenOnceWhateverItsChunks: the scanner calls back once per
// frame with its first 8 body bytes, however the stream is cut: a body
// whose head came in one read and whose rest comes in later ones is still
// one frame (one reply, one request's send time).
func TestAFrameIsSeenOnceWhateverItsChunks(t *testing.T) {
	body := []byte("0123456789abcdefghij")
	stream := append([]byte{0, 0, 0, byte(len(body))}, body...)
	stream = append(stream, 0, 0, 0, 2, 'x', 'y') // a second, short frame
	for cut := 1; cut < len(stream); cut++ {
		for cut2 := cut; cut2 < len(stream); cut2++ {
			var s frameScanner
			var heads []string
			for _, chunk := range [][]byte{stream[:cut], stream[cut:cut2], stream[cut2:]} {
				s.scan(chunk, func(head []byte) { heads = append(heads, string(head)) })
			}
			if want := []string{"01234567", "xy"}; !slices.Equal(heads, want) {
				t.Fatalf("the stream cut at %d and %d: got heads %q; want %q", cut, cut2, heads, want)
			}
		}
	}
}
