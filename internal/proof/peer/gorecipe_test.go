package peer

import (
	"reflect"
	"strings"
	"testing"
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
