package api

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

func TestHealthz(t *testing.T) {
	env := newEnv(t)
	res := serve(t, env.server(t), get("/healthz", ""))
	if res.status != 200 || res.body["status"] != "ok" {
		t.Errorf("got %d %s", res.status, res.raw)
	}
}

func TestReadyz(t *testing.T) {
	up := func(context.Context) error { return nil }
	down := func(context.Context) error { return errors.New("dial tcp 127.0.0.1:5432: connection refused") }
	deadline := func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			return errors.New("no deadline")
		}
		return nil
	}
	tests := []struct {
		name       string
		checks     []Check
		wantStatus int
		want       map[string]any
	}{
		{"no checks", nil, 200, map[string]any{"status": "ready", "checks": map[string]any{}}},
		{"all up", []Check{{"postgres", up}, {"eventstore", deadline}}, 200,
			map[string]any{"status": "ready", "checks": map[string]any{"postgres": "ok", "eventstore": "ok"}}},
		{"one down", []Check{{"postgres", down}, {"eventstore", up}}, 503,
			map[string]any{"status": "unavailable", "checks": map[string]any{"postgres": "unavailable", "eventstore": "ok"}}},
		{"check panics", []Check{{"postgres", func(context.Context) error { panic("nil pool") }}}, 503,
			map[string]any{"status": "unavailable", "checks": map[string]any{"postgres": "unavailable"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			env.deps.Checks = tc.checks
			res := serve(t, env.server(t), get("/readyz", ""))
			if res.status != tc.wantStatus || !reflect.DeepEqual(res.body, tc.want) {
				t.Errorf("got %d %s, want %d %v", res.status, res.raw, tc.wantStatus, tc.want)
			}
		})
	}
}
