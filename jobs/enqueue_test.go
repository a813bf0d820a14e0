package jobs

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// fakeFetcher is a StatusFetcher built from a function, for tests that
// must hold a fetch at a precise point.
type fakeFetcher struct {
	name  string
	fetch func(ctx context.Context, id string) (*domain.PaymentStatusObserved, error)
}

var _ StatusFetcher = (*fakeFetcher)(nil)

func (f *fakeFetcher) Name() string { return f.name }

func (f *fakeFetcher) Observe(ctx context.Context, id string) ([]domain.Event, error) {
	obs, err := f.fetch(ctx, id)
	if err != nil {
		return nil, err
	}
	return []domain.Event{obs}, nil
}

// mpObservation is what a Mercado Pago status client would return.
func mpObservation(id, status string) *domain.PaymentStatusObserved {
	return &domain.PaymentStatusObserved{
		Meta: domain.Meta{Provider: "mercadopago", ProviderEventID: providers.ObservationID(id, status, "", "0", ""),
			ProviderEventType: "api.payment", ProviderPaymentID: id, OccurredAt: now()},
		Status: domain.StatusPending, ProviderStatus: status, Amount: 1000, Currency: "BRL",
	}
}

func notified(provider, id, notification string) domain.Event {
	return &domain.PaymentNotified{Meta: domain.Meta{Provider: provider, ProviderEventID: notification,
		ProviderEventType: "payment.updated", ProviderPaymentID: id, OccurredAt: now()}}
}

// enqueueTx runs EnqueueTx in a transaction of its own, committed or not.
func enqueueTx(t *testing.T, e *env, j *Jobs, commit bool, events ...domain.Event) {
	t.Helper()
	err := pgx.BeginFunc(t.Context(), e.pool, func(tx pgx.Tx) error {
		if err := j.Enqueuer().EnqueueTx(t.Context(), tx, events); err != nil {
			return err
		}
		if !commit {
			return errRollback
		}
		return nil
	})
	if err != nil && (commit || !errors.Is(err, errRollback)) {
		t.Fatal(err)
	}
}

var errRollback = errors.New("roll back")

// TestEnqueueIsUniquePerPayment enqueues without workers running, so every
// job stays waiting: bursts collapse into one fetch per payment.
func TestEnqueueIsUniquePerPayment(t *testing.T) {
	type batch struct {
		events   []domain.Event
		rollback bool
	}
	burst := make([]batch, 20)
	for i := range burst {
		burst[i] = batch{events: []domain.Event{notified("mercadopago", "1319001", fmt.Sprintf("n_%d", i))}}
	}
	tests := []struct {
		name    string
		prefix  string
		batches []batch
		want    []string
	}{
		{name: "a burst, one batch each", prefix: "1319", batches: burst, want: []string{"available:1319001"}},
		{name: "one payment notified thrice in a batch", prefix: "1320", batches: []batch{{events: []domain.Event{
			notified("mercadopago", "1320001", "n_1"), notified("mercadopago", "1320001", "n_2"),
			notified("mercadopago", "1320001", "n_3")}}},
			want: []string{"available:1320001"}},
		{name: "two payments in a batch", prefix: "1321", batches: []batch{{events: []domain.Event{
			notified("mercadopago", "1321001", "n_1"), notified("mercadopago", "1321002", "n_1")}}},
			want: []string{"available:1321001", "available:1321002"}},
		{name: "facts and providers not enriched are not fetched", prefix: "1322", batches: []batch{{events: []domain.Event{
			notified("asaas", "1322001", "evt_1&1"),
			&domain.PaymentSucceeded{Meta: domain.Meta{Provider: "mercadopago", ProviderEventID: "x", ProviderPaymentID: "1322002"}},
			&domain.PaymentStatusObserved{Meta: domain.Meta{Provider: "mercadopago", ProviderEventID: "y", ProviderPaymentID: "1322003"}},
		}}}},
		{name: "a rolled-back batch enqueues nothing", prefix: "1323", batches: []batch{{rollback: true, events: []domain.Event{
			notified("mercadopago", "1323001", "n_1")}}}},
	}
	e := newEnv(t)
	cfg := e.config()
	cfg.Fetchers = append(cfg.Fetchers, &fakeFetcher{name: "mercadopago"}, &fakeFetcher{name: "asaas"})
	cfg.EnrichProviders = []string{"mercadopago"}
	j, err := New(cfg) // not started: nothing is worked
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, b := range tt.batches {
				enqueueTx(t, e, j, !b.rollback, b.events...)
			}
			var got []string
			for _, s := range states(t, e.jobs(j)) {
				if strings.Contains(s, ":"+tt.prefix) {
					got = append(got, s)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("jobs %v, want %v", got, tt.want)
			}
		})
	}
}

// TestEnqueueWhileFetchRunning: a notification that finds the payment's
// fetch running enqueues one more fetch after it (the running one may have
// read the provider before the change); more notifications meanwhile
// collapse into that one; once every fetch finished, a notification gets a
// new one.
func TestEnqueueWhileFetchRunning(t *testing.T) {
	const id = "1324001"
	e := newEnv(t)
	started := make(chan struct{}, 8)
	release := make(chan struct{})
	var mu sync.Mutex
	fetches := 0
	cfg := e.config()
	cfg.Workers = 2
	cfg.EnrichProviders = []string{"mercadopago"}
	cfg.Fetchers = []StatusFetcher{&fakeFetcher{name: "mercadopago", fetch: func(ctx context.Context, id string) (*domain.PaymentStatusObserved, error) {
		mu.Lock()
		fetches++
		n := fetches
		mu.Unlock()
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return mpObservation(id, fmt.Sprintf("state_%d", min(n, 3))), nil
	}}}
	j := e.startJobs(cfg)

	enqueueTx(t, e, j, true, notified("mercadopago", id, "n_1"))
	<-started // fetch A is running
	enqueueTx(t, e, j, true, notified("mercadopago", id, "n_2"))
	<-started // fetch B, after A, took the second worker
	for n := 3; n <= 5; n++ {
		enqueueTx(t, e, j, true, notified("mercadopago", id, fmt.Sprintf("n_%d", n)))
	}
	jobs := e.jobs(j)
	if len(jobs) != 3 {
		t.Fatalf("jobs %v, want 3", states(t, jobs))
	}
	want := []string{"running:" + id, fmt.Sprintf("running:%s:after=%d", id, jobs[0].ID),
		fmt.Sprintf("available:%s:after=%d", id, jobs[1].ID)}
	if got := states(t, jobs); !reflect.DeepEqual(got, want) {
		t.Errorf("while two fetches run: jobs %v, want %v", got, want)
	}

	close(release)
	allDone := func() bool {
		for _, job := range e.jobs(j) {
			if job.State != rivertype.JobStateCompleted {
				return false
			}
		}
		return true
	}
	eventually(t, "every fetch done", allDone)
	enqueueTx(t, e, j, true, notified("mercadopago", id, "n_6"))
	eventually(t, "the fetch after completion done", func() bool { return len(e.jobs(j)) == 4 && allDone() })
	mu.Lock()
	defer mu.Unlock()
	if fetches != 4 {
		t.Errorf("%d fetches, want 4", fetches)
	}
	// Fetches 3 and 4 saw the same state: one event.
	if got, want := e.observed("mercadopago", id), map[string]int{
		"pending/state_1 1000/0/0 BRL": 1, "pending/state_2 1000/0/0 BRL": 1, "pending/state_3 1000/0/0 BRL": 1,
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("observations %v, want %v", got, want)
	}
}
