package readapi

import (
	"errors"
	"testing"
	"time"
)

func TestRevisionIn(t *testing.T) {
	const stream = `{"stream":"payment-mercadopago-1","events":[
		{"event_id":"aaaa","revision":0,"type":"payment.notified.v1"},
		{"event_id":"bbbb","revision":1,"type":"payment.status_observed.v1"},
		{"event_id":"cccc","revision":2,"type":"payment.notified.v1"}]}`
	tests := []struct {
		name    string
		raw     string
		id      string
		want    uint64
		wantErr error
	}{
		{"first", stream, "aaaa", 0, nil},
		{"after an enrichment", stream, "cccc", 2, nil},
		{"not stored", stream, "dddd", 0, errNotInStream},
		{"empty stream", `{"events":[]}`, "aaaa", 0, errNotInStream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := revisionIn([]byte(tt.raw), tt.id)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("revisionIn = %d, %v; want %d, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
	if _, err := revisionIn([]byte("<html>"), "aaaa"); err == nil {
		t.Error("not JSON: no error")
	}
}

func TestBalanceQueryURL(t *testing.T) {
	at := time.Date(2026, 12, 1, 22, 30, 0, 123456000, time.FixedZone("BRT", -3*3600))
	for q, want := range map[BalanceQuery]string{
		{}:                               "/v1/ledger/balances",
		{AsOf: at, Basis: "recorded"}:    "/v1/ledger/balances?as_of=2026-12-02T01%3A30%3A00.123456Z&basis=recorded",
		{AsOf: at.Truncate(time.Second)}: "/v1/ledger/balances?as_of=2026-12-02T01%3A30%3A00Z",
	} {
		if got := q.URL(); got != want {
			t.Errorf("%+v: %s, want %s", q, got, want)
		}
	}
}
