// Package locktest puts a ZooKeeper lock recipe written in Go through the
// scenarios in which such a recipe can break: a real ZooKeeper server, every
// contender's client behind a fault proxy of its own, and faults made on the
// wire (a reply lost, a connection cut, a session kept or let expire)
// rather than waited for. It is the peer table of this module (package
// peers, which runs the same scenarios against ours, go-zookeeper's
// zk.Lock, kazoo and Curator) as a kit for the recipe's own tests.
//
// A recipe implements Recipe (how it names its nodes, and a lock object
// for one contender's session) and its tests call Run:
//
//	func TestMain(m *testing.M) { locktest.Main(m) }
//
//	func TestMyLock(t *testing.T) {
//		locktest.Run(t, "mylock", myRecipe{}, locktest.Expect("cancel", locktest.NoFeature))
//	}
//
// Each scenario is a subtest named after its ID. Its outcome is a Verdict
// with the observation that decided it: Kept, Broken, NoFeature (the
// recipe has no cancel or no timeout), or NotShown (the setup did not come
// about, so nothing was shown). Run fails a Broken or NotShown scenario,
// and one whose verdict differs from what Expect said; Check returns the
// Results and fails nothing, to build a table; Verdicts does the same
// outside a test function (an Example).
//
// # What the scenarios promise to check
//
// The promise a lock makes in every scenario: at most one holder at a
// time; a hold is on a node of the holder's own live session; the lock
// object tells the truth about holding; a contender that gives up leaves
// no node behind (a node of a live session that nobody deletes blocks the
// lock for everyone). Names: O is an observer client that plants and
// deletes nodes directly; W the contender under test; H a holder; B a
// second contender.
//
//   - stranger: a persistent child "config" sits in the lock dir; W must
//     hold past it or refuse cleanly, not fail and leave its node.
//   - own-node-deleted: W waits on H; O deletes W's node; H releases. W
//     must not report a hold without a node of its own.
//   - suffix-order: O's older node is named to sort after any contender's
//     name; W must wait behind it (order by the sequence suffix).
//   - wrap-older, wrap-newer: nodes named as the server names them after
//     its signed 32-bit counter wraps ("-000000001", "-2147483648"); W must
//     not hold beside an older one nor wait behind a newer one (refusing
//     names it cannot order keeps the promise).
//   - over-long: an older node with an 11-digit suffix; W must wait or
//     refuse, not skip it.
//   - lost-reply: the proxy loses the reply to W's create (the server made
//     the node) and the connection with it; the session survives. W must
//     hold exactly its own node, or give up leaving none.
//   - lost-reply-expired: the same, and W stays cut off until the server
//     expires the session; W must hold only a node of its new session, or
//     none.
//   - foreign-guid: after a lost create reply, W's node is replaced by a
//     node with the same GUID owned by O's session; W must not adopt it.
//   - reacquire-foreign: W acquires and releases; O makes a node named
//     like W's first; W acquires again and must wait behind it.
//   - cancel: W waits on H and is cancelled; it must return without a hold
//     and delete its node (NoFeature for an Uncancellable recipe).
//   - cleanup-reply-lost, cleanup-request-lost: W times out waiting on H;
//     the proxy loses the reply to its cleanup delete, or the delete
//     itself, with the connection. W's node must not outlive the reconnect
//     and W's next acquisition must hold once H is gone.
//   - expiry-holding: W holds; the proxy cuts it off until the session
//     expires; W's lock object must know it no longer holds (Held false).
//   - total-deadline: W acquires with a 600 ms timeout behind a queue whose
//     members leave one by one; the timeout must be a total deadline.
//   - lost-children-reply: the reply to W's getChildren after its create
//     (the listing that decides whether W is first) is lost; W must not
//     hold while H holds, and must not fail leaving its node.
//   - suspended-holding: W holds and is cut off, then healed before the
//     session can expire; W must warn while cut off and say when it is
//     back (a Signaller), and still hold.
//   - foreign-child-first: a persistent child "0" (another lock's dir)
//     sorts before every candidate (CURATOR-43); W must not wait on it.
//   - lost-lookup: a lost create reply, then a lost reply to the look-up
//     that would find the node again (go-zookeeper #229).
//   - release-cut-off: W releases while cut off, its delete cannot reach
//     the server (CURATOR-678); once back, the node must go, by the recipe
//     or by a second Release while Held still says so.
//   - stale-session-node: W's client gives its session up while the proxy
//     keeps it alive on the server (CURATOR-604); W must not hold on the
//     old session's node, which expires and lets B in.
//
// # What is cleaned up
//
// Each scenario plays under a fresh parent node of its own, removed with
// everything below it when the scenario's subtest ends; every client and
// proxy it opened is closed then, and an Acquire still running is
// cancelled (its context) and waited for. Main stops the servers it
// started when the test binary ends, also on Ctrl-C, and removes what an
// earlier binary killed before cleanup left behind.
//
// # What it does not promise
//
// The scenarios are a fixed set of faults, one at a time, on one
// standalone server (and a short-session server for the expiry scenes):
// no ensemble, no partition between servers, no random schedule. Kept
// means the recipe kept the promise in that scene, not that it is correct.
// The bounds are those of a loaded 2-core machine (seconds); a recipe
// whose answers take longer reads NotShown or Broken. The scenarios call
// Acquire, Release and Held only; what a recipe offers beyond them
// (fencing tokens, listeners) they do not see, but for Signaller. Verdicts
// are judged against this module's wording of the promise; the Observation
// is for a person, not for parsing.
package locktest
