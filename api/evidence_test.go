package api

import (
	"context"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/projections"
	"github.com/payledger/payledger/providers/stripe"
)

var _ SealReader = (*projections.Queries)(nil)

// noSeals is a chain that has sealed nothing yet.
type noSeals struct{}

func (noSeals) StreamSeals(context.Context, string) ([]eventstore.Seal, error) { return nil, nil }

// TestEvidenceOnPostgres: a Stripe payment's evidence through the real
// store, sealer and adapter. Its delivery re-verifies; the chain links are
// sealed and intact; after the secret is rotated away it reads
// unverifiable; after its stored body is altered by SQL it reads failed and
// its chain link is no longer intact.
func TestEvidenceOnPostgres(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{})
	q := projections.NewQueries(pool)
	serverWith := func(secrets ...string) *Server {
		live, err := stripe.New(stripe.Config{Secrets: secrets})
		if err != nil {
			t.Fatal(err)
		}
		env := newEnv(t)
		env.deps.Store, env.deps.Payments, env.deps.Seals, env.deps.Providers = store, q, q, []Provider{live}
		return env.server(t)
	}
	srv := serverWith(stripeSecret)
	for _, name := range []string{"payment_intent.created.json", "payment_intent.succeeded.json"} {
		body := stripeFixture(t, name)
		if res := serve(t, srv, stripeWebhook(body, stripe.Sign(body, stripeSecret, testNow))); res.status != http.StatusOK {
			t.Fatalf("%s: %d %s", name, res.status, res.raw)
		}
	}
	if err := projections.NewSealer(projections.SealerConfig{}, pool, store).SealUntilIdle(t.Context(), 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	path := "/v1/payments/stripe/" + stripePayment + "/evidence"
	facts := func(srv *Server) []map[string]any {
		t.Helper()
		res := serve(t, srv, get(path, readToken))
		if res.status != http.StatusOK {
			t.Fatalf("evidence: %d %s", res.status, res.raw)
		}
		return objects(t, res.body["facts"])
	}
	result := func(f map[string]any) string { return f["verification"].(map[string]any)["result"].(string) }
	chain := func(f map[string]any) map[string]any { return f["chain"].(map[string]any) }

	got := facts(srv)
	if len(got) != 2 {
		t.Fatalf("%d facts, want 2", len(got))
	}
	for _, f := range got {
		body, _ := base64.StdEncoding.DecodeString(f["delivery"].(map[string]any)["body"].(string))
		if result(f) != string(domain.AuthVerified) || chain(f)["intact"] != true || chain(f)["sealed"] != chain(f)["hash"] ||
			len(body) == 0 || f["delivery"].(map[string]any)["headers"].(map[string]any)[stripe.Header] == nil {
			t.Errorf("fresh fact: %v", f)
		}
	}
	if chain(got[1])["previous"] != chain(got[0])["hash"] {
		t.Errorf("the second link does not chain on the first")
	}
	checkEvidenceZip(t, srv, path, stripeSecret, got)
	checkReplayRoute(t, srv, "/v1/payments/stripe/"+stripePayment+"/replay")
	if res := serve(t, srv, get(path+"?format=pdf", readToken)); res.status != http.StatusBadRequest {
		t.Errorf("format=pdf: %d, want 400", res.status)
	}

	for _, f := range facts(serverWith("whsec_api_test_Anoth3r")) {
		if result(f) != string(domain.AuthUnverifiable) {
			t.Errorf("after the secret was rotated away: %v", f["verification"])
		}
	}
	if _, err := pool.Exec(t.Context(), `UPDATE es_events SET metadata = jsonb_set(metadata, '{raw_body}',
		to_jsonb(encode(convert_to(replace(convert_from(decode(metadata->>'raw_body', 'base64'), 'UTF8'), '5000', '9000'), 'UTF8'), 'base64')))
		WHERE stream = $1 AND revision = 1`, eventstore.PaymentStream("stripe", stripePayment)); err != nil {
		t.Fatal(err)
	}
	got = facts(srv)
	if result(got[0]) != string(domain.AuthVerified) || result(got[1]) != string(domain.AuthFailed) || chain(got[1])["intact"] != false {
		t.Errorf("after the second body was altered: %v / %v", got[1]["verification"], chain(got[1]))
	}
	if res := serve(t, srv, get(path+"?as_of=2026-01-01T00:00:00Z", readToken)); res.status != http.StatusBadRequest {
		t.Errorf("a parameter: %d, want 400", res.status)
	}
	if res := serve(t, srv, get("/v1/payments/stripe/pi_unknown/evidence", readToken)); res.status != http.StatusNotFound {
		t.Errorf("unknown payment: %d, want 404", res.status)
	}
}

// checkReplayRoute: GET …/replay lists the stream's facts in fold order
// with what they changed and ends with the state; as_of before the first
// fact is 404, a bad one 400, an unknown payment 404.
func checkReplayRoute(t *testing.T, srv http.Handler, path string) {
	t.Helper()
	res := serve(t, srv, get(path, readToken))
	if res.status != http.StatusOK {
		t.Fatalf("replay: %d %s", res.status, res.raw)
	}
	facts := objects(t, res.body["facts"])
	state, _ := res.body["state"].(map[string]any)
	if len(facts) != 2 || facts[0]["n"] != float64(1) || len(objects(t, facts[1]["changes"])) == 0 || state["status"] != "confirmed" {
		t.Errorf("replay: %s", res.raw)
	}
	for q, want := range map[string]int{"?as_of=2000-01-01T00:00:00Z": 404, "?as_of=soon": 400, "?basis=recorded": 400} {
		if res := serve(t, srv, get(path+q, readToken)); res.status != want {
			t.Errorf("replay%s: %d, want %d", q, res.status, want)
		}
	}
	if res := serve(t, srv, get("/v1/payments/stripe/pi_nobody/replay", readToken)); res.status != http.StatusNotFound {
		t.Errorf("unknown payment's replay: %d", res.status)
	}
}
