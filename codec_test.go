package zk19_test

import (
	"fmt"
	"path"
	"testing"
	"time"

	"github.com/zk19/zk19/internal/claims"
	"github.com/zk19/zk19/internal/jute/official"
	"github.com/zk19/zk19/internal/scene"
	"github.com/zk19/zk19/internal/zkserver"
)

// TestE5_ProxyCodecAgreesWithOfficialJute proves that the proxy's Jute codec
// (internal/jute) agrees with the official Jute classes of the server's own
// jar, which the article's proxy used. Every record the proxy reads or
// writes (official.Kinds: the request header, the create body, createTTL's
// body read as a create, the reply header, and on the server-to-server
// links the leader's QuorumPacket and a proposal's TxnHeader) is checked on
// edge cases built from its Go type, both ways: the official classes encode
// and Go decodes the same fields; Go encodes and the official classes
// decode the same fields; the two encodings are equal byte for byte. The real frames of
// testdata/jute then go to both decoders as they are, and the handshake
// frames, which the proxy forwards unread, must be exactly what the
// official ConnectRequest and ConnectResponse read. FuzzJuteAgreesWithOfficial
// in internal/jute does the same on fuzzed bytes.
func TestE5_ProxyCodecAgreesWithOfficialJute(t *testing.T) {
	claims.Open(t, "E5")
	if scene.Backend.Kind == "" {
		t.Skipf("E5 compares with the jar of the server under test, and no backend resolved: %v", scene.NoServer)
	}
	if scene.VersionErr != nil {
		t.Skipf("skipped: E5 compares with the jar of the server's version, read with srvr; %v", scene.VersionErr)
	}
	o := official.Start(t, scene.Backend)
	claims.Phase(t, "oracle: %s; ZooKeeper %s on Java %s; jar %v, javac %v, JVM start %v",
		o.Jar.From, o.About.Version, o.About.Java, o.JarTime.Round(time.Millisecond), o.JavacTime.Round(time.Millisecond), o.JVMTime.Round(time.Millisecond))
	juteJar := path.Base(o.About.Sources["org.apache.jute.BinaryInputArchive"])
	for _, k := range official.Kinds {
		t.Logf("class %s from %s", k.Class, o.About.Sources[k.Class])
	}
	if scene.Backend.Kind == zkserver.External && scene.JarVersion(o) != scene.Version.Version {
		t.Skipf("skipped: E5 compares with the jar of the server under test; the local jar is ZooKeeper %q and the external server answers srvr with %q: set ZK19_ZOOKEEPER_JAR to a jar of the server's version", o.About.Version, scene.Version.Version)
	}
	if scene.JarVersion(o) != scene.Version.Version {
		claims.NotShown(t, "E5", "the jar is ZooKeeper %q; the server under test answers srvr with %q; want the server's own jar", o.About.Version, scene.Version.Version)
	}

	claims.Phase(t, "Go records, both ways: official encode -> Go decode, Go encode -> official decode, encodings equal")
	records, cesu := 0, 0
	for i := range official.Kinds {
		k := &official.Kinds[i]
		for _, c := range official.Cases(k) {
			r, err := o.CheckValue(k, c.Value)
			if err != nil {
				t.Fatalf("E5 %s, case %s: %v", k.Name, c.Name, err)
			}
			records++
			if r.Note == "" {
				t.Logf("check %s %s: ok, %d bytes, same fields both ways, same bytes", k.Name, c.Name, r.Bytes)
				continue
			}
			cesu++
			t.Logf("check %s %s: ok, %d bytes, same fields both ways; %s", k.Name, c.Name, r.Bytes, r.Note)
		}
	}
	records += scene.CheckCapturedFrames(t, o)

	claims.Phase(t, "constants: opcodes and special xids")
	missing, n, err := o.CheckConstants()
	if err != nil {
		t.Fatalf("E5: %v", err)
	}
	t.Logf("check constants: ok, %d Go opcodes and xids equal the jar's; opcodes the Go table does not name: %v", n, missing)
	bytesNote := "and every encoding is byte-for-byte the official one"
	if cesu > 0 {
		bytesNote = fmt.Sprintf("and every encoding is byte-for-byte the official one except in %d records with characters outside the BMP, "+
			"which the official BinaryOutputArchive writes as CESU-8 and Go as UTF-8 (the official decoder reads Go's bytes back right, and its own as U+FFFD)", cesu)
	}
	whose := "the server's own"
	if scene.Backend.Kind == zkserver.External {
		whose = "a local jar of the external server's version"
	}
	claims.Evidence(t, "%d records, %d kinds, both directions, agree with org.apache.jute from %s (ZooKeeper %s, %s: srvr says %s), %s; "+
		"the handshake frames the proxy forwards unread are exactly the official ConnectRequest and ConnectResponse; %d opcodes and xids agree",
		records, len(official.Kinds), juteJar, scene.JarVersion(o), whose, scene.Version.Version, bytesNote, n)
}
