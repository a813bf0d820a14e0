package jobs

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps the dependency rule of the package documentation:
// jobs sees the rest of payledger through domain, eventstore's contract and
// interfaces of its own, never through api, projections, an event store
// adapter or a provider package.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/payledger/payledger/"
	allowed := map[string]bool{mod + "jobs": true, mod + "domain": true, mod + "eventstore": true}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, mod) && !allowed[pkg] {
			t.Errorf("jobs depends on %s", pkg)
		}
	}
}
