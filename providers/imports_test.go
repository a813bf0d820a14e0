package providers_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/payledger/payledger/"

// TestProviderPackagesImports keeps every provider package's production code
// on the standard library, domain, providers and providers/rest: a provider
// is an adapter at the edge and must never reach into the store, the API or
// the projections (and SDKs are for tests only, e.g. stripe-go's
// differential test).
func TestProviderPackagesImports(t *testing.T) {
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowedAll := map[string]bool{module + "domain": true, module + "providers": true, module + "providers/rest": true}
	checked := 0
	for _, pkg := range strings.Fields(string(out)) {
		if allowedAll[pkg] {
			continue
		}
		deps, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(deps)) {
			if dep != pkg && !allowedAll[dep] {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
		checked++
	}
	if checked < 4 {
		t.Errorf("checked %d provider packages, want at least 4 (stripe, mercadopago, asaas, pagarme)", checked)
	}
}
