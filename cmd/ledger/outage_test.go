package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/internal/pgtest"
)

// setConnectable opens or closes a database to new connections and, when
// closing, ends the sessions it has: to the ledger the event store is gone.
func setConnectable(t *testing.T, dbURL string, open bool) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	allow := "false"
	if open {
		allow = "true"
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH ALLOW_CONNECTIONS "+allow); err != nil {
		t.Fatal(err)
	}
	if !open {
		if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
			t.Fatal(err)
		}
	}
}

// TestE2EEventStoreOutage: while the event store cannot be reached, webhooks
// answer 503 so the provider retries and nothing acknowledged is lost; when it
// returns, the ledger recovers by itself and the retried delivery is stored once.
func TestE2EEventStoreOutage(t *testing.T) {
	env := baseEnv(newDB(t))
	esURL := newDB(t)
	env["LEDGER_EVENTSTORE_URL"] = esURL
	l := startLedger(t, env)
	now := time.Now()
	id := "pi_3QxOutage_01"
	before := piEvent("evt_out_1", "payment_intent.created", id, base, 1200)
	if code, body := l.webhook(t, before.body(), secretOld, now); code != http.StatusOK {
		t.Fatalf("before the outage: %d %v", code, body)
	}

	setConnectable(t, esURL, false)
	t.Cleanup(func() { setConnectable(t, esURL, true) })
	during := piEvent("evt_out_2", "payment_intent.succeeded", id, base+5, 1200)
	if code, body := l.webhook(t, during.body(), secretOld, now); code != http.StatusServiceUnavailable {
		t.Errorf("during the outage: %d %v, want 503", code, body)
	}
	if code, body := l.get(t, "/readyz", ""); code != http.StatusServiceUnavailable {
		t.Errorf("readyz during the outage: %d %v, want 503", code, body)
	}
	if code, _ := l.get(t, "/healthz", ""); code != http.StatusOK {
		t.Errorf("healthz during the outage: %d, want 200 (the process is up)", code)
	}

	setConnectable(t, esURL, true)
	// The provider's retry of the rejected delivery now succeeds, once.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := l.webhook(t, during.body(), secretOld, now)
		if code == http.StatusOK {
			if body["outcome"] != "accepted" {
				t.Errorf("retry after the outage: %v, want accepted", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ledger did not recover: %d %v", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	l.waitPayment(t, id, func(b map[string]any) bool { return b["status"] == "confirmed" && num(b["event_count"]) == 2 })
	if code, body := l.get(t, "/readyz", ""); code != http.StatusOK {
		t.Errorf("readyz after the outage: %d %v", code, body)
	}
	if n := eventCount(t, l, id); n != 2 {
		t.Errorf("events = %d, want 2", n)
	}
}

// TestE2EKurrentDBOutage: losing KurrentDB makes webhooks answer 503 (so the
// provider retries) and /readyz report it; when the node is back at the same
// address the ledger recovers by itself, without a restart.
func TestE2EKurrentDBOutage(t *testing.T) {
	env := baseEnv(newDB(t))
	srv := newKurrent(t)
	env["LEDGER_EVENTSTORE_URL"] = srv.URL()
	l := startLedger(t, env)
	now := time.Now()
	id := "pi_3QxKdbOutage_01"
	before := piEvent("evt_kout_1", "payment_intent.created", id, base, 1200)
	if code, body := l.webhook(t, before.body(), secretOld, now); code != http.StatusOK {
		t.Fatalf("before the outage: %d %v", code, body)
	}
	l.waitPayment(t, id, statusIs("pending"))

	srv.Stop()
	during := piEvent("evt_kout_2", "payment_intent.succeeded", id, base+5, 1200)
	if code, body := l.webhook(t, during.body(), secretOld, now); code != http.StatusServiceUnavailable {
		t.Errorf("during the outage: %d %v, want 503", code, body)
	}
	if code, body := l.get(t, "/readyz", ""); code != http.StatusServiceUnavailable {
		t.Errorf("readyz during the outage: %d %v, want 503", code, body)
	}

	if err := srv.Start(); err != nil {
		t.Fatalf("restart kurrenttest: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body := l.webhook(t, during.body(), secretOld, now)
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ledger did not recover from the KurrentDB outage: %d %v", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	l.waitPayment(t, id, func(b map[string]any) bool { return b["status"] == "confirmed" && num(b["event_count"]) == 2 })
	if code, body := l.get(t, "/readyz", ""); code != http.StatusOK {
		t.Errorf("readyz after the outage: %d %v", code, body)
	}
	// The server restarted with an empty idempotency cache: a redelivery of
	// the first event must still be a duplicate (the adapter reads the stream).
	if code, body := l.webhook(t, before.body(), secretOld, time.Now()); code != http.StatusOK || body["outcome"] != "duplicate" {
		t.Errorf("redelivery after the KurrentDB restart: %d %v, want duplicate", code, body)
	}
	if n := eventCount(t, l, id); n != 2 {
		t.Errorf("events = %d, want 2", n)
	}
}
