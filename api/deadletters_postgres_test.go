package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/jobs"
	"github.com/payledger/payledger/projections"
)

// dlEnv is a server on Postgres with the real dead-letter queue, retrier
// and redelivery, parsing with parse.
type dlEnv struct {
	pool  *pgxpool.Pool
	store *postgres.Store
	dl    *projections.DeadLetters
}

func newDLEnv(t *testing.T) *dlEnv {
	pool := pgtest.NewPool(t)
	return &dlEnv{pool: pool, store: postgres.New(pool, postgres.Options{}), dl: projections.NewDeadLetters(pool)}
}

func (d *dlEnv) server(t *testing.T, parse func(context.Context, http.Header, url.Values, []byte) (domain.Notification, error)) *Server {
	t.Helper()
	p := newFakepay(fakeSecret)
	p.ParseFn = parse
	redelivery, err := NewRedelivery(RedeliveryConfig{Providers: []Provider{p}, Store: d.store, DeadLetters: d.dl})
	if err != nil {
		t.Fatal(err)
	}
	retrier, err := jobs.NewRetrier(jobs.RetrierConfig{Pool: d.pool, Store: d.store, Redeliverer: redelivery,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(t)
	env.deps.Store, env.deps.Payments, env.deps.Providers = d.store, projections.NewQueries(d.pool), []Provider{p}
	env.deps.DeadLetters, env.deps.DeadLetterQueue, env.deps.Retrier = d.dl, d.dl, retrier
	return env.server(t)
}

func adminPost(path, body string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	return req
}

// streamLen is how many events stream holds.
func (d *dlEnv) streamLen(t *testing.T, stream string) int {
	t.Helper()
	recs, err := d.store.ReadStream(t.Context(), stream)
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// fixedParse is fakepay after a fix of its event identity: a delivery about
// pi_b gets an event ID of its own, so it no longer collides.
func fixedParse(ctx context.Context, h http.Header, q url.Values, body []byte) (domain.Notification, error) {
	var d fakeDelivery
	if err := json.Unmarshal(body, &d); err != nil {
		return domain.Notification{}, domain.Invalid("fixed: parse", "payload is not JSON", err)
	}
	for _, e := range d.Events {
		if e.Payment == "pi_b" {
			d.ID += ":pi_b"
		}
	}
	fixed, err := json.Marshal(d)
	if err != nil {
		return domain.Notification{}, err
	}
	return fakeParse(ctx, h, q, fixed)
}

// TestDeadLetterCollisionRetry: a collision's dead letter through the API.
// A retry while the cause remains is 409 and counts on the entry, which
// stays open; after the adapter is fixed, the retry records the delivery
// (its payment's stream gets the fact) and the entry is retried; every
// retry is a fact in deadletter-{id}; a second retry is 409.
func TestDeadLetterCollisionRetry(t *testing.T) {
	d := newDLEnv(t)
	srv := d.server(t, fakeParse)
	first := []byte(`{"id":"evt_same","type":"payment_intent.payment_failed","events":[` +
		`{"kind":"failed","payment":"pi_a","amount":700,"currency":"usd","at":1740000000}]}`)
	second := []byte(`{"id":"evt_same","type":"payment_intent.payment_failed","events":[` +
		`{"kind":"failed","payment":"pi_b","amount":900,"currency":"usd","at":1740000001}]}`)
	serve(t, srv, signedWebhook(first, testNow))
	res := serve(t, srv, signedWebhook(second, testNow))
	if res.body["outcome"] != "conflict" {
		t.Fatalf("second delivery: %d %s", res.status, res.raw)
	}
	id := int64(res.body["dead_letter_id"].(float64))
	path := fmt.Sprintf("/v1/dead-letters/%d", id)

	list := serve(t, srv, get("/v1/dead-letters?kind=collision&state=open&provider=fakepay", readToken))
	entries, _ := list.body["dead_letters"].([]any)
	if list.status != http.StatusOK || len(entries) != 1 {
		t.Fatalf("list: %d %s", list.status, list.raw)
	}
	one := serve(t, srv, get(path, readToken))
	payload, _ := one.body["payload"].(map[string]any)
	if one.status != http.StatusOK || payload["provider"] != "fakepay" || payload["stored_in"] != "payment-fakepay-pi_a" {
		t.Fatalf("entry: %d %s", one.status, one.raw)
	}

	if res := serve(t, srv, adminPost(path+"/retry", "")); res.status != http.StatusConflict {
		t.Fatalf("retry while it still collides: %d %s, want 409", res.status, res.raw)
	}
	e, err := d.dl.DeadLetter(t.Context(), id)
	if err != nil || e.State != domain.DeadLetterOpen || e.Attempts != 2 || e.Retries != 1 || e.RetriedBy != "admin" {
		t.Fatalf("after a failed retry: %+v, %v", e, err)
	}
	if n := d.streamLen(t, "payment-fakepay-pi_b"); n != 0 {
		t.Fatalf("the colliding stream holds %d events", n)
	}

	fixed := d.server(t, fixedParse)
	res = serve(t, fixed, adminPost(path+"/retry", ""))
	if res.status != http.StatusOK || res.body["state"] != "retried" || res.body["retries"] != float64(2) ||
		res.body["retried_at"] == nil || res.body["retried_by"] != "admin" {
		t.Fatalf("retry after the fix: %d %s", res.status, res.raw)
	}
	if n := d.streamLen(t, "payment-fakepay-pi_b"); n != 1 {
		t.Errorf("after the fix the payment's stream holds %d events, want 1", n)
	}
	if n := d.streamLen(t, eventstore.DeadLetterStream(id)); n != 2 {
		t.Errorf("%d retry facts, want 2 (the failed retry and the one that worked)", n)
	}
	if res := serve(t, fixed, adminPost(path+"/retry", "")); res.status != http.StatusConflict {
		t.Errorf("second retry: %d %s, want 409", res.status, res.raw)
	}
	if res := serve(t, fixed, adminPost("/v1/dead-letters/retry", `{"kind":"collision"}`)); res.body["retried"] != float64(0) {
		t.Errorf("bulk retry of nothing open: %s", res.raw)
	}
}

// TestDeadLetterBulkRetry: a bulk retry retries exactly the open entries
// its filter matches, once each (their jobs are back in River's queue), and
// pages of the list walk every entry once.
func TestDeadLetterBulkRetry(t *testing.T) {
	d := newDLEnv(t)
	srv := d.server(t, fakeParse)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	record := func(key, cause, provider, payment string) {
		args, _ := json.Marshal(jobs.EnrichArgs{Provider: provider, PaymentID: payment})
		payload, _ := json.Marshal(map[string]any{"job_id": 900000 + len(key), "kind": jobs.EnrichKind, "args": json.RawMessage(args)})
		if _, err := d.dl.Record(t.Context(), domain.DeadLetterFailure{Key: key, Kind: domain.DeadLetterJob, Cause: cause,
			Provider: provider, ProviderPaymentID: payment, Streams: []string{eventstore.PaymentStream(provider, payment)},
			Attempts: 5, At: at, Error: "status API: 500", Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		record(fmt.Sprintf("job:%d", i+1), jobs.EnrichKind, "stripe", fmt.Sprintf("pi_%d", i))
	}
	record("job:6", jobs.EnrichKind, "asaas", "pay_1")
	record("job:77", jobs.FeeKind, "stripe", "pi_fee")

	var seen []string
	for cursor := ""; ; {
		q := "/v1/dead-letters?limit=3"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		page := serve(t, srv, get(q, readToken))
		for _, e := range page.body["dead_letters"].([]any) {
			seen = append(seen, e.(map[string]any)["provider_payment_id"].(string))
		}
		if cursor, _ = page.body["next_cursor"].(string); cursor == "" {
			break
		}
	}
	if len(seen) != 7 {
		t.Errorf("pages walked %v, want 7 entries", seen)
	}
	if res := serve(t, srv, get("/v1/dead-letters?cursor=not-ours", readToken)); res.status != http.StatusBadRequest {
		t.Errorf("bad cursor: %d, want 400", res.status)
	}

	res := serve(t, srv, adminPost("/v1/dead-letters/retry", `{"kind":"job","cause":"`+jobs.EnrichKind+`","provider":"stripe"}`))
	if res.status != http.StatusOK || res.body["retried"] != float64(5) {
		t.Fatalf("bulk retry: %d %s, want 5 retried", res.status, res.raw)
	}
	if res := serve(t, srv, adminPost("/v1/dead-letters/retry", `{"kind":"job","cause":"`+jobs.EnrichKind+`","provider":"stripe"}`)); res.body["retried"] != float64(0) {
		t.Errorf("bulk retry again: %s, want 0", res.raw)
	}
	var queued int
	if err := d.pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = $1`, jobs.EnrichKind).Scan(&queued); err != nil || queued != 5 {
		t.Errorf("%d enrich jobs queued, want 5 (%v)", queued, err)
	}
	open := serve(t, srv, get("/v1/dead-letters?state=open", readToken))
	if n := len(open.body["dead_letters"].([]any)); n != 2 {
		t.Errorf("%d entries still open, want the asaas and fee ones: %s", n, open.raw)
	}
}
