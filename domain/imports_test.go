package domain_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainImportsStandardLibraryOnly keeps the dependency rule checked: the
// domain must not grow a dependency on infrastructure.
func TestDomainImportsStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg != "github.com/payledger/payledger/domain" {
			t.Errorf("domain depends on non-standard package %s", pkg)
		}
	}
}
