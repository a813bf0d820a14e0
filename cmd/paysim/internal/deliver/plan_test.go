package deliver

import (
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/gen"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

func TestPlanSendsEveryStep(t *testing.T) {
	ps, _ := gen.Generate(5, 200, truth.Providers(), nil)
	for _, c := range []Chaos{{}, {Dup: 1, Reorder: 1, MaxDelay: time.Millisecond}, {Dup: 0.3, Reorder: 0.3}} {
		for i, p := range ps {
			groups := plan(planRand(5, i), p, c)
			count := make([]int, len(p.Steps))
			for _, g := range groups {
				for _, s := range g {
					count[s.step]++
				}
			}
			for k, n := range count {
				switch {
				case n == 0:
					t.Fatalf("%+v: %s step %d never sent", c, p.Key(), k)
				case c.Dup == 0 && n != 1, c.Dup == 1 && n != 2:
					t.Fatalf("%+v: %s step %d sent %d times", c, p.Key(), k, n)
				}
			}
			if c.Reorder == 0 && c.Dup == 0 {
				for k, g := range groups {
					if g[0].step != k {
						t.Fatalf("%s: without chaos, group %d sends step %d", p.Key(), k, g[0].step)
					}
				}
			}
		}
	}
}
