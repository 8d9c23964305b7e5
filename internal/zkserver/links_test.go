package zkserver

import (
	"testing"
	"time"
)

func TestLinkedEnsembleHasNoBypass(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(map[int]string{3: "three", 5: "five"}[n], func(t *testing.T) {
			e, l := StartLinkedEnsemble(t, n, WithTickTime(200*time.Millisecond))
			if _, err := e.Leader(5 * time.Second); err != nil {
				t.Fatal(err)
			}
			if by := l.Bypasses(); len(by) != 0 {
				t.Fatalf("got bypasses %v; want none", by)
			}
			if p := l.Proxy(ElectionPort, 1, 2); p == nil || p.Stats().Accepted == 0 {
				t.Logf("election proxy 1->2 stats: %+v", p.Stats())
			}
		})
	}
}
