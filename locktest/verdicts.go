package locktest

import (
	"fmt"

	"github.com/zk19/zk19/internal/server/zkserver"
)

// Verdicts is Check outside a test function, for an Example or a program
// built as a test binary whose TestMain is Main: it runs the scenarios one
// after another, each in a scope of its own that it closes before the next,
// and returns every Result. A scenario whose setup fails, or that would
// skip, is NotShown with the reason.
func Verdicts(name string, r Recipe, opts ...Option) ([]Result, error) {
	o := &options{}
	for _, f := range opts {
		f(o)
	}
	chosen, err := o.chosen()
	if err != nil {
		return nil, err
	}
	col := goRecipe(name, r)
	var out []Result
	for _, s := range chosen {
		out = append(out, verdictOf(name, s, col))
	}
	return out, nil
}

// verdictOf plays s for col in a scope of its own.
func verdictOf(name string, s scenario, col peerRecipe) (res Result) {
	sc := zkserver.NewScope("locktest-" + name + "-" + s.id).Quiet()
	defer sc.Close()
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprint(r)
			res = Result{Scenario: s.id, Recipe: name, Verdict: NotShown, Observation: msg, ObservationZh: msg}
		}
	}()
	return playOne(sc, s, s.server(sc), col, defaultSkip)
}
