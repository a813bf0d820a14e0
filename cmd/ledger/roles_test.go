package main

import (
	"strings"
	"testing"
)

func TestParseRoles(t *testing.T) {
	tests := []struct {
		in      string
		want    Roles
		wantErr string
	}{
		{"", allRoles(), ""},
		{"  ", allRoles(), ""},
		{"all", allRoles(), ""},
		{"webhooks", Roles{Webhooks: true}, ""},
		{"webhooks,api", Roles{Webhooks: true, API: true}, ""},
		{" Projector , jobs ,", Roles{Projector: true, Jobs: true}, ""},
		{"jobs,jobs", Roles{Jobs: true}, ""},
		{"api,all", allRoles(), ""},
		{"webhooks,ingest", Roles{}, `unknown role "ingest"`},
		{",", Roles{}, "names no role"},
	}
	for _, tc := range tests {
		got, err := parseRoles(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseRoles(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseRoles(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// String gives back what parseRoles reads, in the documented order.
func TestRolesString(t *testing.T) {
	for _, r := range []Roles{allRoles(), {Webhooks: true, API: true}, {Projector: true, Jobs: true}, {Jobs: true}} {
		back, err := parseRoles(r.String())
		if err != nil || back != r {
			t.Errorf("%+v → %q → %+v, %v", r, r.String(), back, err)
		}
	}
	if got := allRoles().String(); got != "webhooks,api,projector,jobs" {
		t.Errorf("allRoles().String() = %q", got)
	}
}
