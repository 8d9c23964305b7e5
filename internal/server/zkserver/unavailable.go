package zkserver

import "fmt"

// Reason is why a test cannot have the server, the word or the jar it asked
// for where it runs. The server wing names the reason and its facts
// (Unavailable); the proof wing words it in English and Chinese for the
// record (SkipWith).
type Reason int

// The reasons a test is skipped for, not failed.
const (
	// NoServerShort: no backend resolves and -short is in effect.
	NoServerShort Reason = iota + 1
	// NoFaultInjection: the backend owns no server and no server-to-server
	// link (external); Kind names it.
	NoFaultInjection
	// WordNotAllowed: the server's 4lw.commands.whitelist leaves out Word;
	// Err is the *NotAllowedError.
	WordNotAllowed
	// NoServerOfItsOwn: the test needs a server it owns; the external
	// backend only shares Servers.
	NoServerOfItsOwn
	// TooFewServers: the test needs Need servers; ZK19_SERVERS names Named.
	TooFewServers
	// NoJDK: E5 found no javac to compile its oracle.
	NoJDK
	// NoLocalJar: E5 on the external backend found no local install of the
	// server's version; Err says why.
	NoLocalJar
	// NoJar: the Kind backend has no server jar on this machine.
	NoJar
	// NoBackend: E5 asked for the jar of a backend and none resolves; Err
	// says why.
	NoBackend
	endOfReasons
)

var reasonNames = [...]string{"", "NoServerShort", "NoFaultInjection", "WordNotAllowed", "NoServerOfItsOwn",
	"TooFewServers", "NoJDK", "NoLocalJar", "NoJar", "NoBackend"}

// String is r's name, or Reason(n) for no reason of the list.
func (r Reason) String() string {
	if r <= 0 || r >= endOfReasons {
		return fmt.Sprintf("Reason(%d)", int(r))
	}
	return reasonNames[r]
}

// Reasons is every Reason, in order.
func Reasons() []Reason {
	var out []Reason
	for r := Reason(1); r < endOfReasons; r++ {
		out = append(out, r)
	}
	return out
}

// Unavailable is the error of a test that cannot run here, with the facts
// its reason names; the fields a reason does not name are zero. Its Error is
// the English of the skip, the same words the proof wing's wording gives it
// (harness.SkipUnavailable, whose test holds the two to each other).
type Unavailable struct {
	Reason  Reason
	Kind    Kind     // the backend's kind (NoFaultInjection, NoJar)
	Word    string   // the four-letter word (WordNotAllowed)
	Servers []string // the servers the external backend shares (NoServerOfItsOwn)
	Need    int      // the servers the test needs (TooFewServers)
	Named   int      // the servers ZK19_SERVERS names (TooFewServers)
	Err     error    // the cause (WordNotAllowed, NoLocalJar, NoBackend)
}

// Error is u's reason in English, as the record's skip line says it.
func (u *Unavailable) Error() string {
	switch u.Reason {
	case NoServerShort:
		return "skipped: no ZooKeeper server (-short); run scripts/setup to get one"
	case NoFaultInjection:
		return fmt.Sprintf("skipped: the %s backend only puts client proxies in front of servers it does not own; the claim needs %s", u.Kind, NeedsOwnServersAndLinks)
	case WordNotAllowed:
		return fmt.Sprintf("skipped: the claim asks the server for %s; %v", u.Word, u.Err)
	case NoServerOfItsOwn:
		return fmt.Sprintf("skipped: the claim needs a server of its own; the external backend only shares %v", u.Servers)
	case TooFewServers:
		return fmt.Sprintf("skipped: the claim needs %d servers; ZK19_SERVERS names %d", u.Need, u.Named)
	case NoJDK:
		return "E5 needs a JDK to compile the official-Jute oracle and found no javac " +
			"(JAVA_HOME/bin or PATH): install openjdk-17-jdk-headless (scripts/setup does)"
	case NoLocalJar:
		return fmt.Sprintf("skipped: E5 compares with the jar of the server under test; the external server's is not on this machine, and no local install of its version was found: %v", u.Err)
	case NoJar:
		return fmt.Sprintf("E5 compares with the jar of the server under test; the %q backend has none on this machine "+
			"(use ZK19_BACKEND=process or container)", u.Kind)
	case NoBackend:
		return fmt.Sprintf("E5 compares with the jar of the server under test, and no backend resolves: %v", u.Err)
	}
	return fmt.Sprintf("unavailable: %v", u.Reason)
}

// Unwrap is u's cause.
func (u *Unavailable) Unwrap() error { return u.Err }

// NeedsOwnServersAndLinks is what a claim needs that RequireFaults skips,
// unless its caller says more (harness.RequireFaults).
const NeedsOwnServersAndLinks = "servers of its own and proxies on their server-to-server links"

// SkipWith is how the server wing skips t for u (SkipFor). By default it skips
// with u's English; the proof wing's TestMains (harness.Main and its kin)
// set it to word u in English and Chinese for the record. The server wing
// itself words no verdict and imports nothing of the proof's.
var SkipWith = func(t TB, u *Unavailable) {
	t.Helper()
	t.Skipf("%s", u.Error())
}

// SkipFor skips t for u, through SkipWith.
func SkipFor(t TB, u *Unavailable) {
	t.Helper()
	SkipWith(t, u)
}
