package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/providers"
	"github.com/payledger/payledger/providers/providertest"
)

// providertest.Lister is the copy of lister every provider's tests assert:
// the two must stay one contract.
var (
	_ lister              = providertest.Lister(nil)
	_ providertest.Lister = lister(nil)
)

func TestBackfillOptions(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, provider, since, until string
		wantErr                      string
		wantUntil                    time.Time
	}{
		{name: "until defaults to now", provider: "stripe", since: "2026-03-01T00:00:00Z", wantUntil: now},
		{name: "offsets become UTC", provider: "asaas", since: "2026-03-01T00:00:00-03:00", until: "2026-03-02T00:00:00-03:00",
			wantUntil: time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)},
		{name: "no provider", since: "2026-03-01T00:00:00Z", wantErr: "--provider is required"},
		{name: "no since", provider: "stripe", wantErr: "--since is required"},
		{name: "not RFC 3339", provider: "stripe", since: "2026-03-01", wantErr: "want an RFC 3339 time"},
		{name: "bad until", provider: "stripe", since: "2026-03-01T00:00:00Z", until: "yesterday", wantErr: "--until"},
		{name: "empty window", provider: "stripe", since: "2026-03-02T00:00:00Z", until: "2026-03-02T00:00:00Z", wantErr: "is not before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := backfillOptions{Provider: tt.provider}
			err := o.parse(tt.since, tt.until, now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parse = %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !o.Until.Equal(tt.wantUntil) || o.Until.Location() != time.UTC || o.Since.Location() != time.UTC {
				t.Fatalf("parse = %v, until %v, want %v in UTC", err, o.Until, tt.wantUntil)
			}
		})
	}
}

// fakeLister serves fixed pages, the cursor being the page's index.
type fakeLister struct {
	pages [][]domain.Notification
	err   error // returned for the page after the last when set
	calls int
	stuck bool // return the same cursor forever
}

func (f *fakeLister) Coverage() providers.Coverage { return providers.CoverageChanges }

func (f *fakeLister) ListPage(_ context.Context, _ providers.Window, cursor string) (providers.Page, error) {
	f.calls++
	i := 0
	if cursor != "" {
		fmt.Sscan(cursor, &i)
	}
	if i >= len(f.pages) {
		return providers.Page{}, f.err
	}
	p := providers.Page{Notifications: f.pages[i]}
	switch {
	case f.stuck:
		p.Next = "1"
	case i+1 < len(f.pages) || f.err != nil:
		p.Next = fmt.Sprint(i + 1)
	}
	return p, nil
}

func observedNote(id string, st domain.Status) domain.Notification {
	obs := &domain.PaymentStatusObserved{Meta: domain.Meta{Provider: "mercadopago", ProviderEventID: "obs_" + id + string(st),
		ProviderEventType: "api.payment", ProviderPaymentID: id, OccurredAt: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)},
		Status: st, ProviderStatus: string(st), Amount: 1000, Currency: "BRL"}
	if st == domain.StatusConfirmed {
		obs.AmountCaptured = 1000
	}
	return domain.Notification{Provider: "mercadopago", ProviderEventID: obs.ProviderEventID, ProviderEventType: "api.payment",
		Events: []domain.Event{obs}}
}

// TestBackfillRun: a window listed over three pages is stored once; the
// second run finds only duplicates; a dry run counts what is new without
// storing it; an object that cannot be stored counts as failed and the run
// goes on; a refused key and a provider that repeats its cursor stop it.
func TestBackfillRun(t *testing.T) {
	ctx := t.Context()
	pool, err := openStorePool(ctx, newDB(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	store := postgres.New(pool, postgres.Options{})
	b := backfiller{store: store, rec: eventstore.NewRecorder(store, eventstore.NewCodec(), 5, nil), codec: eventstore.NewCodec(), now: time.Now}
	w := providers.Window{Since: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}
	ignored := domain.Notification{Provider: "mercadopago", ProviderEventID: "x", IgnoredReason: "not a payment"}
	l := &fakeLister{pages: [][]domain.Notification{
		{observedNote("1", domain.StatusConfirmed), observedNote("2", domain.StatusPending)},
		{observedNote("3", domain.StatusConfirmed), ignored},
		{observedNote("4", domain.StatusFailed)},
	}}
	progressCalls := 0
	first := backfillReport{Provider: "mercadopago"}
	if err := b.run(ctx, l, w, &first, func() { progressCalls++ }); err != nil {
		t.Fatal(err)
	}
	if first.Fetched != 5 || first.New != 4 || first.Duplicates != 0 || first.Ignored != 1 || first.Failed != 0 || progressCalls != 3 {
		t.Fatalf("first run = %+v, %d progress calls", first, progressCalls)
	}
	again := backfillReport{Provider: "mercadopago"}
	if err := b.run(ctx, l, w, &again, func() {}); err != nil {
		t.Fatal(err)
	}
	if again.New != 0 || again.Duplicates != 4 {
		t.Fatalf("second run = %+v, want only duplicates", again)
	}
	evs, err := store.ReadStream(ctx, eventstore.PaymentStream("mercadopago", "1"))
	if err != nil || len(evs) != 1 {
		t.Fatalf("stream 1 = %d events, %v; want one", len(evs), err)
	}
	var md eventstore.Metadata
	if err := json.Unmarshal(evs[0].Metadata, &md); err != nil || md.Source != eventstore.SourceBackfill {
		t.Fatalf("metadata %s (%v): want source %q", evs[0].Metadata, err, eventstore.SourceBackfill)
	}

	dry := b
	dry.dryRun = true
	l.pages = append(l.pages, []domain.Notification{observedNote("5", domain.StatusConfirmed)})
	dr := backfillReport{Provider: "mercadopago"}
	if err := dry.run(ctx, l, w, &dr, func() {}); err != nil {
		t.Fatal(err)
	}
	if dr.New != 1 || dr.Duplicates != 4 {
		t.Fatalf("dry run = %+v, want 1 new and 4 duplicates", dr)
	}
	if evs, _ := store.ReadStream(ctx, eventstore.PaymentStream("mercadopago", "5")); len(evs) != 0 {
		t.Fatalf("the dry run stored %d events", len(evs))
	}

	foreign := observedNote("6", domain.StatusConfirmed)
	foreign.Events[0].(*domain.PaymentStatusObserved).Provider = "stripe"
	bad := &fakeLister{pages: [][]domain.Notification{{foreign, observedNote("7", domain.StatusConfirmed)}}}
	br := backfillReport{Provider: "mercadopago"}
	if err := b.run(ctx, bad, w, &br, func() {}); err != nil {
		t.Fatal(err)
	}
	if br.Failed != 1 || br.New != 1 || len(br.Errors) != 1 || !strings.Contains(br.Errors[0], "belongs to provider") {
		t.Fatalf("run with a bad object = %+v", br)
	}

	refused := &fakeLister{pages: [][]domain.Notification{{observedNote("8", domain.StatusConfirmed)}},
		err: domain.Unauthorized("mercadopago: list", "401 Unauthorized", nil)}
	if err := b.run(ctx, refused, w, &backfillReport{Provider: "mercadopago"}, func() {}); err == nil ||
		!strings.Contains(err.Error(), "refused the API credentials") {
		t.Fatalf("run with a refused key = %v", err)
	}
	stuck := &fakeLister{pages: [][]domain.Notification{{}, {}}, stuck: true}
	if err := b.run(ctx, stuck, w, &backfillReport{Provider: "mercadopago"}, func() {}); err == nil ||
		!strings.Contains(err.Error(), "same page cursor") || stuck.calls > 3 {
		t.Fatalf("run with a stuck cursor = %v after %d calls", err, stuck.calls)
	}
}

func TestBackfillLister(t *testing.T) {
	for _, tt := range []struct{ name, provider, want string }{
		{"unknown provider", "paypal", "unknown provider"},
		{"no credentials", "stripe", "no API credentials"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := backfillLister(Config{}, tt.provider)
			var u usageError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("backfillLister = %v, want a usage error with %q", err, tt.want)
			}
		})
	}
}
