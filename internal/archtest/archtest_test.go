package archtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/payledger/payledger"

// rule says what the production code of the packages matching pkg may depend
// on. pkg and ours are module-relative; "x/..." matches x and everything
// below it. ours is checked against every package of the module the package
// depends on, directly or not, so nothing forbidden sneaks in through an
// allowed package; third lists the third-party import-path prefixes the
// package may import itself (their own dependencies are theirs).
type rule struct {
	pkg   string
	ours  []string
	third []string
}

const (
	pgx        = "github.com/jackc/pgx/v5"
	uuid       = "github.com/google/uuid"
	prometheus = "github.com/prometheus/client_golang"
	river      = "github.com/riverqueue/river"
	esdb       = "github.com/EventStore/EventStore-Client-Go/v4"
	grpc       = "google.golang.org/grpc"
)

// providerDeps is what a provider adapter may reach: the domain, the shared
// provider helpers and the status-API client.
var providerDeps = []string{"domain", "providers", "providers/rest", "internal/backoff"}

// rules is the dependency rule of ARCHITECTURE.md. Every package of the
// module must match one; the most specific pattern wins.
var rules = []rule{
	{pkg: "domain"},
	{pkg: "eventstore", ours: []string{"domain", "internal/backoff"}, third: []string{uuid}},
	{pkg: "eventstore/postgres", ours: []string{"domain", "eventstore", "internal/pgerr", "internal/backoff"}, third: []string{pgx, uuid}},
	{pkg: "eventstore/kurrentdb", ours: []string{"domain", "eventstore", "internal/backoff"}, third: []string{esdb + "/esdb", grpc, uuid}},
	{pkg: "eventstore/kurrenttest", third: []string{esdb + "/protos", grpc, uuid}},
	{pkg: "eventstore/storetest", ours: []string{"domain", "eventstore", "internal/backoff"}, third: []string{uuid}},
	{pkg: "providers", ours: []string{"domain"}},
	{pkg: "providers/rest", ours: []string{"domain", "providers", "internal/backoff"}},
	{pkg: "providers/...", ours: providerDeps},
	{pkg: "providers/providertest", ours: []string{"domain", "providers"}},
	{pkg: "jobs", ours: []string{"domain", "eventstore", "internal/backoff", "projections", "internal/pgerr"}, third: []string{pgx, river, "github.com/sony/gobreaker/v2", "golang.org/x/time/rate"}},
	{pkg: "projections", ours: []string{"domain", "eventstore", "internal/pgerr", "internal/backoff"},
		third: []string{pgx, uuid, prometheus, "github.com/hashicorp/golang-lru/v2"}},
	{pkg: "api", ours: []string{"domain", "eventstore", "internal/backoff"}, third: []string{uuid, "github.com/gorilla/mux", prometheus}},
	// The console reads everything through the API handler it is given.
	{pkg: "api/console", ours: []string{"domain"}},
	{pkg: "migrations", third: []string{pgx, "github.com/pressly/goose/v3", river}},
	{pkg: "internal/backoff"},
	{pkg: "internal/archtest"},
	{pkg: "internal/logtest"},
	{pkg: "internal/openapitest", third: []string{"github.com/pb33f/libopenapi", "github.com/pb33f/libopenapi-validator"}},
	{pkg: "internal/pgerr", ours: []string{"domain"}, third: []string{pgx}},
	{pkg: "internal/pgtest", ours: []string{"migrations"}, third: []string{pgx}},
	{pkg: "internal/promtest", third: []string{prometheus, "github.com/prometheus/client_model"}},
	{pkg: "cmd/ledger", ours: []string{"domain", "eventstore", "eventstore/postgres", "eventstore/kurrentdb", "api", "projections",
		"jobs", "migrations", "providers/...", "internal/pgerr", "internal/backoff", "api/console"},
		third: []string{pgx, prometheus, uuid, "github.com/schollz/progressbar/v3", "golang.org/x/term"}},
	{pkg: "cmd/kurrenttest", ours: []string{"eventstore/kurrenttest"}},
	// paysim tests the ledger from the outside: provider packages for
	// signing, never the store, the projections or the API.
	{pkg: "cmd/paysim/...", ours: []string{"cmd/paysim/...", "domain", "providers/...", "internal/backoff"},
		third: []string{pgx, "golang.org/x/sync"}},
}

// pkg is what `go list -json` says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Standard   bool
	Error      *struct{ Err string }
}

// TestDependencyRule checks every package of the module against rules.
func TestDependencyRule(t *testing.T) {
	pkgs, err := listModule()
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; want the whole module", len(pkgs))
	}
	for _, problem := range check(rules, pkgs) {
		t.Error(problem)
	}
}

// TestCheckReportsViolations proves the checker bites: a forbidden import of
// ours (directly or through another package), a third-party import not in
// the rule, and a package the table does not know are each reported.
func TestCheckReportsViolations(t *testing.T) {
	table := []rule{{pkg: "domain"}, {pkg: "api", ours: []string{"domain"}, third: []string{"github.com/gorilla/mux"}}}
	tests := []struct {
		name string
		pkg  pkg
		want string
	}{
		{"allowed", pkg{ImportPath: module + "/api", Imports: []string{"net/http", "github.com/gorilla/mux"},
			Deps: []string{"net/http", module + "/domain", "github.com/gorilla/mux"}}, ""},
		{"forbidden package of ours", pkg{ImportPath: module + "/domain", Imports: []string{module + "/api"},
			Deps: []string{module + "/api"}}, "domain must not depend on api"},
		{"forbidden through another package", pkg{ImportPath: module + "/api", Imports: []string{module + "/domain"},
			Deps: []string{module + "/domain", module + "/projections"}}, "api must not depend on projections"},
		{"third-party not in the rule", pkg{ImportPath: module + "/domain", Imports: []string{"github.com/google/uuid"},
			Deps: []string{"github.com/google/uuid"}}, "domain must not import github.com/google/uuid"},
		{"unknown package", pkg{ImportPath: module + "/ledgerbook"}, "ledgerbook has no rule"},
		{"broken package", pkg{ImportPath: module + "/api", Error: &struct{ Err string }{"no Go files"}}, "api: no Go files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(table, []pkg{tt.pkg})
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("check = %q, want no problem", got)
			case tt.want != "" && !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tt.want) }):
				t.Errorf("check = %q, want a problem containing %q", got, tt.want)
			}
		})
	}
}

// check returns one line per dependency that breaks its package's rule.
func check(table []rule, pkgs []pkg) []string {
	var problems []string
	for _, p := range pkgs {
		name := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if p.Error != nil {
			problems = append(problems, fmt.Sprintf("%s: %s", name, p.Error.Err))
			continue
		}
		r, ok := ruleFor(table, name)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no rule in internal/archtest: add what it may depend on", name))
			continue
		}
		for _, dep := range p.Deps {
			if ours, found := strings.CutPrefix(dep, module+"/"); found && ours != name && !matchesAny(r.ours, ours) {
				problems = append(problems, fmt.Sprintf("%s must not depend on %s (ARCHITECTURE.md, packages)", name, ours))
			}
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") && thirdParty(imp) && !hasPrefixAny(r.third, imp) {
				problems = append(problems, fmt.Sprintf("%s must not import %s (ARCHITECTURE.md, packages)", name, imp))
			}
		}
	}
	return problems
}

// ruleFor picks the most specific rule matching name.
func ruleFor(table []rule, name string) (rule, bool) {
	best, found := rule{}, false
	for _, r := range table {
		if matches(r.pkg, name) && (!found || len(r.pkg) > len(best.pkg)) {
			best, found = r, true
		}
	}
	return best, found
}

func matches(pattern, name string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return name == base || strings.HasPrefix(name, base+"/")
	}
	return pattern == name
}

func matchesAny(patterns []string, name string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(p, name) })
}

func hasPrefixAny(prefixes []string, imp string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return imp == p || strings.HasPrefix(imp, p+"/") })
}

// thirdParty tells a module path from the standard library: only non-standard
// import paths have a dot in their first element.
func thirdParty(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return strings.Contains(first, ".")
}

// listModule runs `go list -json ./...` at the module's root.
func listModule() ([]pkg, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Deps,Standard,Error", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}
