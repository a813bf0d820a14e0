package jobs

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/providers/stripe"
)

// bt1500 is a balance transaction with Stripe's fee of 15.00, in USD: the
// settlement currency of a payment made in EUR.
const bt1500 = `{"id":"txn_3QFeeJob1500","object":"balance_transaction","amount":2200,"created":1767323045,` +
	`"currency":"usd","exchange_rate":1.1,"fee":1500,"fee_details":[{"amount":1500,"application":null,"currency":"usd",` +
	`"description":"Stripe processing fees","type":"stripe_fee"}],"net":700,"status":"pending","type":"charge"}`

// feeConfig is a Jobs config fetching Stripe's fees, with quick retries.
func (e *env) feeConfig(maxAttempts int) Config {
	return Config{
		Pool: e.pool, Fetchers: []StatusFetcher{e.statusClient()}, Store: e.store, Logger: e.log.Logger(),
		MaxAttempts: maxAttempts, Workers: 2, FeeProviders: []string{stripe.ProviderName},
		RetryMin: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond, PollInterval: 10 * time.Millisecond,
		JobTimeout: 20 * time.Second, testOnly: true,
	}
}

// appendFact appends ev as a webhook would.
func (e *env) appendFact(ev domain.Event) {
	e.t.Helper()
	m := ev.EventMeta()
	data, err := eventstore.NewCodec().Encode(ev, eventstore.Metadata{Provider: m.Provider, ReceivedAt: time.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.store.Append(e.t.Context(), eventstore.PaymentStream(m.Provider, m.ProviderPaymentID), eventstore.Any(),
		[]eventstore.EventData{data}); err != nil {
		e.t.Fatal(err)
	}
}

func succeeded(provider, pi, eventID string) *domain.PaymentSucceeded {
	return &domain.PaymentSucceeded{Meta: domain.Meta{Provider: provider, ProviderEventID: eventID,
		ProviderEventType: "payment_intent.succeeded", ProviderPaymentID: pi, OccurredAt: now()},
		Amount: 2000, AmountReceived: 2000, Currency: "EUR"}
}

// chargeUpdated is what Stripe's charge.updated maps to once the balance
// transaction exists.
func chargeUpdated(pi, eventID string) *domain.PaymentNotified {
	return &domain.PaymentNotified{Meta: domain.Meta{Provider: "stripe", ProviderEventID: eventID,
		ProviderEventType: "charge.updated", ProviderPaymentID: pi, OccurredAt: now()},
		Action: "balance_transaction txn_3QFeeJob1500"}
}

// fees returns the payment's fee facts.
func (e *env) fees(provider, pi string) []*domain.FeeAssessed {
	e.t.Helper()
	var out []*domain.FeeAssessed
	for _, ev := range e.stream(provider, pi) {
		if f, ok := ev.(*domain.FeeAssessed); ok {
			out = append(out, f)
		}
	}
	return out
}

// feeJobs lists every fee job, oldest first.
func (e *env) feeJobs(j *Jobs) []*rivertype.JobRow {
	e.t.Helper()
	res, err := j.client.JobList(e.t.Context(), river.NewJobListParams().Kinds(FeeKind).First(1000))
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Jobs
}

// TestFeeEndToEnd: a success is projected, the projector enqueues a fee
// fetch in its batch, the fetch finds the balance transaction null
// (asynchronous capture) and retries until it is there, then appends the fee
// in the settlement currency; the same success delivered again fetches
// nothing more.
func TestFeeEndToEnd(t *testing.T) {
	e := newEnv(t)
	const pi = "pi_3QFee-e2e_1"
	e.api.setFee(pi, "null")
	j := e.startJobs(e.feeConfig(50))
	e.startProjector(j.Enqueuer())
	e.appendFact(succeeded("stripe", pi, "evt_succeeded_1"))

	eventually(t, "a fetch that found no balance transaction", func() bool { return e.api.callCount() >= 2 })
	e.api.setFee(pi, bt1500)
	eventually(t, "the fee recorded", func() bool { return len(e.fees("stripe", pi)) == 1 })
	eventually(t, "the fee job completed", func() bool {
		jobs := e.feeJobs(j)
		return len(jobs) == 1 && jobs[0].State == rivertype.JobStateCompleted
	})
	job := e.feeJobs(j)[0]
	if job.Attempt < 2 || len(job.Errors) != job.Attempt-1 || !strings.Contains(job.Errors[0].Error, "does not state the fee yet") {
		t.Errorf("job: attempt %d, errors %+v; want retries for the missing balance transaction", job.Attempt, job.Errors)
	}
	fee := e.fees("stripe", pi)[0]
	if fee.Amount != 1500 || fee.Currency != "USD" || fee.Source != "balance_transaction txn_3QFeeJob1500" ||
		!fee.OccurredAt.Equal(time.Unix(1767323045, 0)) || fee.ProviderEventType != stripe.EventTypeAPIBalanceTransaction {
		t.Errorf("fee = %+v, want 1500 USD from txn_3QFeeJob1500 at its created time", fee)
	}
	if s := domain.Fold(e.stream("stripe", pi)...).State(); s.Fee != 1500 || s.FeeCurrency != "USD" || s.Currency != "EUR" {
		t.Errorf("folded state %+v, want a 1500 USD fee on a EUR payment", s)
	}

	// The same success redelivered under another ID, and the balance
	// transaction's appearance: the completed fetch absorbs both.
	e.appendFact(succeeded("stripe", pi, "evt_succeeded_2"))
	e.appendFact(chargeUpdated(pi, "evt_charge_updated_1"))
	eventually(t, "the redeliveries projected", func() bool { return e.payment("stripe", pi).EventCount == len(e.stream("stripe", pi)) })
	if jobs := e.feeJobs(j); len(jobs) != 1 {
		t.Errorf("%d fee jobs, want the completed one only", len(jobs))
	}
	if n := len(e.fees("stripe", pi)); n != 1 {
		t.Errorf("%d fee facts, want 1", n)
	}
}

// TestFeeGivesUp: a balance transaction that never appears dead-letters the
// job after its last attempt, with a warning.
func TestFeeGivesUp(t *testing.T) {
	e := newEnv(t)
	const pi = "pi_3QFee-never_1"
	e.api.setFee(pi, "null")
	j := e.startJobs(e.feeConfig(3))
	e.startProjector(j.Enqueuer())
	e.appendFact(succeeded("stripe", pi, "evt_succeeded_1"))

	eventually(t, "the fee job dead-lettered", func() bool {
		jobs := e.feeJobs(j)
		return len(jobs) == 1 && jobs[0].State == rivertype.JobStateDiscarded
	})
	job := e.feeJobs(j)[0]
	if job.Attempt != 3 || len(job.Errors) != 3 {
		t.Errorf("job: attempt %d with %d errors, want 3 and 3", job.Attempt, len(job.Errors))
	}
	dead, err := DeadLetters(t.Context(), e.pool, 10)
	if err != nil || len(dead) != 1 || dead[0].Kind != FeeKind {
		t.Errorf("DeadLetters = %+v, %v; want the fee job", dead, err)
	}
	if n := e.log.Count("giving up on a fee", pi); n != 1 {
		t.Errorf("%d give-up warnings, want 1", n)
	}
	if n := len(e.fees("stripe", pi)); n != 0 {
		t.Errorf("%d fee facts, want none", n)
	}
}

// TestFeeNotificationHurriesRetry: a fetch waiting an hour for its next
// retry runs at once when charge.updated says the balance transaction exists.
func TestFeeNotificationHurriesRetry(t *testing.T) {
	e := newEnv(t)
	const pi = "pi_3QFee-hurry_1"
	e.api.setFee(pi, "null")
	cfg := e.feeConfig(5)
	cfg.RetryMin, cfg.RetryMax = time.Hour, time.Hour
	j := e.startJobs(cfg)
	e.startProjector(j.Enqueuer())
	e.appendFact(succeeded("stripe", pi, "evt_succeeded_1"))
	eventually(t, "the fetch waiting for its retry", func() bool {
		jobs := e.feeJobs(j)
		return len(jobs) == 1 && jobs[0].State == rivertype.JobStateRetryable
	})

	e.api.setFee(pi, bt1500)
	e.appendFact(chargeUpdated(pi, "evt_charge_updated_1"))
	eventually(t, "the fee recorded well before the hour", func() bool { return len(e.fees("stripe", pi)) == 1 })
	eventually(t, "the fee job completed", func() bool {
		jobs := e.feeJobs(j)
		return len(jobs) == 1 && jobs[0].State == rivertype.JobStateCompleted
	})
}

// TestEnqueueFees enqueues without workers: which facts call for a fee
// fetch, and that each payment gets one.
func TestEnqueueFees(t *testing.T) {
	refunded := &domain.PaymentRefunded{Meta: domain.Meta{Provider: "stripe", ProviderEventID: "evt_r", ProviderPaymentID: "pi_r"},
		AmountRefunded: 1, Currency: "EUR"}
	observed := func(id string, captured int64, feeCurrency domain.Currency) *domain.PaymentStatusObserved {
		return &domain.PaymentStatusObserved{Meta: domain.Meta{Provider: "stripe", ProviderEventID: "obs_" + id, ProviderPaymentID: id},
			Status: domain.StatusConfirmed, Amount: 500, AmountCaptured: captured, Currency: "EUR", FeeCurrency: feeCurrency}
	}
	tests := []struct {
		name   string
		events []domain.Event
		want   []string // payment IDs of the fee jobs, oldest first
	}{
		{name: "an observed capture (the reconciler's, its success webhook lost)", events: []domain.Event{observed("pi_o", 500, "")}, want: []string{"pi_o"}},
		{name: "an observation that states its fee, or no capture", events: []domain.Event{observed("pi_f", 500, "EUR"), observed("pi_n", 0, "")}},
		{name: "a success", events: []domain.Event{succeeded("stripe", "pi_1", "evt_1")}, want: []string{"pi_1"}},
		{name: "a success and its redeliveries, and the balance transaction's appearance",
			events: []domain.Event{succeeded("stripe", "pi_1", "evt_1"), succeeded("stripe", "pi_1", "evt_2"), chargeUpdated("pi_1", "evt_3")},
			want:   []string{"pi_1"}},
		{name: "two payments", events: []domain.Event{chargeUpdated("pi_2", "evt_1"), succeeded("stripe", "pi_1", "evt_2")},
			want: []string{"pi_2", "pi_1"}},
		{name: "other facts", events: []domain.Event{refunded}},
		{name: "a provider without fee fetching", events: []domain.Event{succeeded("mercadopago", "1319", "n_1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			cfg := e.feeConfig(5)
			cfg.Fetchers = append(cfg.Fetchers, &fakeFetcher{name: "mercadopago"})
			j, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			enqueueTx(t, e, j, true, tt.events...)
			enqueueTx(t, e, j, false, succeeded("stripe", "pi_rolled_back", "evt_x")) // rolled back: no job
			var got []string
			for _, job := range e.feeJobs(j) {
				got = append(got, feeArgsOf(job).PaymentID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("fee jobs for %v, want %v", got, tt.want)
			}
		})
	}
}
