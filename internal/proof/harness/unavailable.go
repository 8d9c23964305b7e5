package harness

import (
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// SkipUnavailable skips t for u in the record's two languages (claims.Skip:
// the English of the skip line, and the Chinese of the catalogue before
// it). It is how the server wing's skips are worded once a TestMain of the
// harness runs (zkserver.SkipWith): zkserver and juteoracle name the reason
// and its facts, the harness words them. Its English is u.Error(), word for
// word (TestSkipUnavailableWordsEveryReason).
func SkipUnavailable(t zkserver.TB, u *zkserver.Unavailable) {
	t.Helper()
	switch u.Reason {
	case zkserver.NoServerShort:
		claims.Skip(t, "skipped: no ZooKeeper server (-short); run scripts/setup to get one")
	case zkserver.NoFaultInjection:
		skipNoFaults(t, u.Kind, ownServersAndLinks())
	case zkserver.WordNotAllowed:
		claims.Skip(t, "skipped: the claim asks the server for %s; %v", u.Word, u.Err)
	case zkserver.NoServerOfItsOwn:
		claims.Skip(t, "skipped: the claim needs a server of its own; the external backend only shares %v", u.Servers)
	case zkserver.TooFewServers:
		claims.Skip(t, "skipped: the claim needs %d servers; ZK19_SERVERS names %d", u.Need, u.Named)
	case zkserver.NoJDK:
		claims.Skip(t, "E5 needs a JDK to compile the official-Jute oracle and found no javac "+
			"(JAVA_HOME/bin or PATH): install openjdk-17-jdk-headless (scripts/setup does)")
	case zkserver.NoLocalJar:
		claims.Skip(t, "skipped: E5 compares with the jar of the server under test; the external server's is not on this machine, and no local install of its version was found: %v", u.Err)
	case zkserver.NoJar:
		claims.Skip(t, "E5 compares with the jar of the server under test; the %q backend has none on this machine "+
			"(use ZK19_BACKEND=process or container)", u.Kind)
	case zkserver.NoBackend:
		claims.Skip(t, "E5 compares with the jar of the server under test, and no backend resolves: %v", u.Err)
	default:
		claims.Skip(t, "skipped: %v", u)
	}
}

// RequireFaults is zkserver.RequireFaults for a proof that says what it
// does that needs servers and links of its own: why, in English and
// Chinese (zh.Say), takes the place of the default need in the skip.
func RequireFaults(t zkserver.TB, why ...zh.Text) zkserver.Backend {
	t.Helper()
	b := zkserver.MustResolve(t)
	if !b.CanInjectFaults() {
		need := ownServersAndLinks()
		if len(why) > 0 {
			need = zh.Join(why, zh.Say("; "))
		}
		skipNoFaults(t, b.Kind, need)
	}
	return b
}

// skipNoFaults skips t because the backend of kind cannot fault what the
// claim needs.
func skipNoFaults(t zkserver.TB, kind zkserver.Kind, need zh.Text) {
	t.Helper()
	claims.Skip(t, "skipped: the %s backend only puts client proxies in front of servers it does not own; the claim needs %s", kind, need)
}

// ownServersAndLinks is what a claim needs that the external backend cannot
// give, unless the proof says more (zkserver.NeedsOwnServersAndLinks).
func ownServersAndLinks() zh.Text {
	return zh.Say("servers of its own and proxies on their server-to-server links")
}
