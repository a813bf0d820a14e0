package api

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

// rebuildState is a RebuildReader whose answer the test sets, counting reads.
type rebuildState struct {
	on    atomic.Bool
	fail  atomic.Bool
	reads atomic.Int64
}

func (s *rebuildState) Rebuilding(context.Context) (bool, error) {
	s.reads.Add(1)
	if s.fail.Load() {
		return false, errors.New("database down")
	}
	return s.on.Load(), nil
}

// While a projection rebuilds, /v1 answers carry the rebuilding header (in
// the OpenAPI document, which serve checks); the flag is read at most once
// a second, and a failed read keeps the last answer.
func TestRebuildingHeader(t *testing.T) {
	state := &rebuildState{}
	env := newEnv(t)
	env.deps.Rebuilds = state
	env.deps.Payments = &fakeReader{ListPaymentsFn: func(context.Context, domain.PaymentFilter) (domain.PaymentPage, error) {
		return domain.PaymentPage{Payments: []domain.PaymentState{}}, nil
	}}
	srv := env.server(t)
	if res := serve(t, srv, get("/v1/payments", readToken)); res.header.Get(RebuildingHeader) != "" {
		t.Errorf("not rebuilding: header %q", res.header.Get(RebuildingHeader))
	}
	state.on.Store(true)
	srv.rebuild.at = time.Time{} // the second is up
	for range 5 {
		res := serve(t, srv, get("/v1/payments", readToken))
		if res.status != http.StatusOK || res.header.Get(RebuildingHeader) != "true" {
			t.Fatalf("rebuilding: %d, header %q", res.status, res.header.Get(RebuildingHeader))
		}
	}
	if n := state.reads.Load(); n != 2 {
		t.Errorf("%d reads of the flag for 6 requests within a second, want 2", n)
	}
	state.fail.Store(true)
	srv.rebuild.at = time.Time{}
	if res := serve(t, srv, get("/v1/payments", readToken)); res.header.Get(RebuildingHeader) != "true" {
		t.Errorf("after a failed read: header %q, want the last answer", res.header.Get(RebuildingHeader))
	}
	if res := serve(t, srv, get("/healthz", "")); res.header.Get(RebuildingHeader) != "" {
		t.Errorf("/healthz carries the header")
	}
}
