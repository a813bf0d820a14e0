package main

import (
	"fmt"
	"strings"
)

// Roles say which parts of payledger one `ledger serve` process runs
// (LEDGER_ROLES; all four by default). Every process serves /healthz,
// /readyz, /metrics and /openapi.yaml whatever its roles; ARCHITECTURE.md
// says why to split.
type Roles struct {
	Webhooks  bool // POST /webhooks/{provider}
	API       bool // GET /v1/… (the read API for finance and auditors)
	Projector bool // the catch-up projector of the read models
	Jobs      bool // River workers: status fetches, retries, the dead-letter queue
}

// roleList names the roles in the order they are documented and logged.
const roleList = "webhooks, api, projector, jobs"

// allRoles is the default: one process does everything.
func allRoles() Roles { return Roles{Webhooks: true, API: true, Projector: true, Jobs: true} }

// parseRoles reads a comma-separated LEDGER_ROLES value. Empty means all
// roles; a list that names none, or names an unknown role, is an error
// rather than a process that silently does nothing.
func parseRoles(v string) (Roles, error) {
	if strings.TrimSpace(v) == "" {
		return allRoles(), nil
	}
	var r Roles
	for _, name := range splitList(v) {
		switch strings.ToLower(name) {
		case "webhooks":
			r.Webhooks = true
		case "api":
			r.API = true
		case "projector":
			r.Projector = true
		case "jobs":
			r.Jobs = true
		case "all":
			r = allRoles()
		default:
			return Roles{}, fmt.Errorf("unknown role %q: want a comma-separated list of %s (or all)", name, roleList)
		}
	}
	if r == (Roles{}) {
		return Roles{}, fmt.Errorf("%q names no role: want a comma-separated list of %s (or all)", v, roleList)
	}
	return r, nil
}

// String lists the roles r holds, comma-separated, as LEDGER_ROLES takes them.
func (r Roles) String() string {
	var out []string
	for _, role := range []struct {
		on   bool
		name string
	}{{r.Webhooks, "webhooks"}, {r.API, "api"}, {r.Projector, "projector"}, {r.Jobs, "jobs"}} {
		if role.on {
			out = append(out, role.name)
		}
	}
	return strings.Join(out, ",")
}
