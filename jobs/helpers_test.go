package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/logtest"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/projections"
	"github.com/payledger/payledger/providers/mercadopago"
	"github.com/payledger/payledger/providers/rest"
	"github.com/payledger/payledger/providers/stripe"
)

// Compile-time checks of the contracts this package meets structurally.
var (
	_ projections.FollowUp = (*Enqueuer)(nil)
	_ StatusFetcher        = (*stripe.StatusClient)(nil)
	_ FeeFetcher           = (*stripe.StatusClient)(nil)
	_ StatusFetcher        = (*mercadopago.StatusClient)(nil)
	_ Appender             = (*postgres.Store)(nil)
)

// now is the tests' clock, at Postgres' microsecond precision so that event
// times read back from the read model equal the folded ones.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// eventually polls cond until it holds; the generous deadline only bounds a
// broken test, it asserts nothing about speed.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// env is one test's world: a fresh database with payledger's and River's
// schema, the real Postgres event store, and a fake Stripe API that the
// real Stripe status client talks to.
type env struct {
	t     *testing.T
	pool  *pgxpool.Pool
	store *postgres.Store
	api   *fakeAPI
	log   *logtest.Recorder
}

func newEnv(t *testing.T) *env {
	t.Helper()
	migrated := pgtest.NewPool(t)
	// The projector holds two connections, each River client a LISTEN one
	// plus some for fetching and completing: more than pgxpool's default
	// of four on a two-core machine.
	cfg := migrated.Config()
	cfg.MaxConns = 24
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &env{t: t, pool: pool, store: postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond}),
		api: newFakeAPI(t), log: &logtest.Recorder{}}
}

// statusClient is the real Stripe status client on the fake API, making one
// HTTP attempt per fetch so that every failure is a job retry.
func (e *env) statusClient() *stripe.StatusClient {
	e.t.Helper()
	c, err := stripe.NewStatusClient(stripe.StatusConfig{SecretKey: fakeKey,
		Options: rest.Options{BaseURL: e.api.srv.URL, MaxAttempts: 1, Timeout: 5 * time.Second, Now: now}})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// mercadoPagoClient is the real Mercado Pago status client on the fake API,
// one HTTP attempt per fetch.
func (e *env) mercadoPagoClient() *mercadopago.StatusClient {
	e.t.Helper()
	c, err := mercadopago.NewStatusClient(mercadopago.StatusConfig{AccessToken: fakeKey,
		Options: rest.Options{BaseURL: e.api.srv.URL, MaxAttempts: 1, Timeout: 5 * time.Second, Now: now}})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// config is a Jobs config with quick retries and polling, enriching Stripe.
func (e *env) config() Config { return e.configFor(stripe.ProviderName) }

// configFor is config enriching provider ("stripe" or "mercadopago").
func (e *env) configFor(provider string) Config {
	fetcher := StatusFetcher(e.statusClient())
	if provider == mercadopago.ProviderName {
		fetcher = e.mercadoPagoClient()
	}
	return Config{
		Pool: e.pool, Fetchers: []StatusFetcher{fetcher}, Store: e.store, Logger: e.log.Logger(),
		MaxAttempts: 5, Workers: 2, EnrichProviders: []string{provider},
		RetryMin: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond, PollInterval: 10 * time.Millisecond,
		JobTimeout: 20 * time.Second, testOnly: true,
	}
}

// startJobs builds and starts Jobs; they are stopped when the test ends
// unless the test stops them first.
func (e *env) startJobs(cfg Config) *Jobs {
	e.t.Helper()
	j, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := j.Start(context.WithoutCancel(e.t.Context())); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := j.Stop(ctx); err != nil {
			e.t.Errorf("Stop: %v", err)
		}
	})
	return j
}

// startProjector runs the payments projection with follow as its FollowUp
// until the test ends.
func (e *env) startProjector(follow projections.FollowUp) {
	e.t.Helper()
	r := projections.NewRunner(projections.RunnerConfig{FollowUp: follow, BatchSize: 50,
		RetryMin: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond, Logger: e.log.Logger()}, e.pool, e.store)
	ctx, cancel := context.WithCancel(context.WithoutCancel(e.t.Context()))
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("projector: %v", err)
		}
	})
}

// notify appends a notification without state, as a webhook would.
func (e *env) notify(provider, paymentID, notificationID string) {
	e.t.Helper()
	n := &domain.PaymentNotified{Meta: domain.Meta{Provider: provider, ProviderEventID: notificationID,
		ProviderEventType: "payment.updated", ProviderPaymentID: paymentID, OccurredAt: now()},
		Action: "payment.updated"}
	data, err := eventstore.NewCodec().Encode(n, eventstore.Metadata{Provider: provider, ReceivedAt: time.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.store.Append(e.t.Context(), eventstore.PaymentStream(provider, paymentID), eventstore.Any(),
		[]eventstore.EventData{data}); err != nil {
		e.t.Fatal(err)
	}
}

// stream returns the payment's decoded events.
func (e *env) stream(provider, paymentID string) []domain.Event {
	e.t.Helper()
	recs, err := e.store.ReadStream(e.t.Context(), eventstore.PaymentStream(provider, paymentID))
	if err != nil {
		e.t.Fatal(err)
	}
	codec := eventstore.NewCodec()
	out := make([]domain.Event, len(recs))
	for i, rec := range recs {
		if out[i], err = codec.Decode(rec); err != nil {
			e.t.Fatal(err)
		}
	}
	return out
}

// observed returns the payment's observed-status events, counted by the
// state they describe (everything but the fetch time).
func (e *env) observed(provider, paymentID string) map[string]int {
	e.t.Helper()
	out := map[string]int{}
	for _, ev := range e.stream(provider, paymentID) {
		if o, ok := ev.(*domain.PaymentStatusObserved); ok {
			out[fmt.Sprintf("%s/%s %d/%d/%d %s", o.Status, o.ProviderStatus, o.Amount, o.AmountCaptured, o.AmountRefunded, o.Currency)]++
		}
	}
	return out
}

// payment returns the read model's row, or the zero state while there is none.
func (e *env) payment(provider, paymentID string) domain.PaymentState {
	e.t.Helper()
	s, err := projections.NewQueries(e.pool).Payment(e.t.Context(), provider, paymentID)
	if err != nil {
		return domain.PaymentState{}
	}
	return s
}

// jobs lists every enrichment job, oldest first.
func (e *env) jobs(j *Jobs) []*rivertype.JobRow {
	e.t.Helper()
	res, err := j.client.JobList(e.t.Context(), river.NewJobListParams().Kinds(EnrichKind).First(1000))
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Jobs
}

// states renders jobs as "state:payment[:after job]" for comparisons.
func states(t testing.TB, jobs []*rivertype.JobRow) []string {
	t.Helper()
	out := make([]string, len(jobs))
	for i, j := range jobs {
		var a EnrichArgs
		if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
			t.Fatal(err)
		}
		out[i] = string(j.State) + ":" + a.PaymentID
		if a.After != 0 {
			out[i] += fmt.Sprintf(":after=%d", a.After)
		}
	}
	return out
}
