package peer

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

func TestParseEnv(t *testing.T) {
	got, err := ParseEnv(" mylock=/usr/bin/python3 -u /tmp/mylock.py ; other = ./driver --x=1 ;")
	want := []EnvDriver{{"mylock", "/usr/bin/python3 -u /tmp/mylock.py"}, {"other", "./driver --x=1"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"noequals", "=cmd", "name=", "two words=cmd", "a|b=cmd"} {
		if _, err := ParseEnv(bad); err == nil || !strings.Contains(err.Error(), "name=command") {
			t.Errorf("ParseEnv(%q): got %v; want an error saying name=command", bad, err)
		}
	}
	if c := (EnvDriver{"mylock", "python3 x.py"}).Config("mylock-W"); !reflect.DeepEqual(c.Command, []string{"/bin/sh", "-c", "exec python3 x.py"}) || c.Name != "mylock-W" {
		t.Fatalf("Config: got %+v; want the command run by /bin/sh with exec, named mylock-W", c)
	}
}

type fakeRecipe struct{}

func (fakeRecipe) NodeName(guid string) string     { return guid + "-x-" }
func (fakeRecipe) NewLock(*zk.Conn, string) GoLock { return nil }

func TestRegisterKeepsOrderAndRefusesADuplicate(t *testing.T) {
	Register("fake-a", fakeRecipe{})
	Register("fake-b", fakeRecipe{})
	var names []string
	for _, r := range Registered() {
		names = append(names, r.Name)
	}
	if !reflect.DeepEqual(names, []string{"fake-a", "fake-b"}) {
		t.Fatalf("got %v; want [fake-a fake-b]", names)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "registered twice") {
			t.Fatalf("got %v; want a panic saying fake-a was registered twice", r)
		}
	}()
	Register("fake-a", fakeRecipe{})
}
