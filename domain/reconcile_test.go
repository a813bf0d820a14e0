package domain_test

import (
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func TestClassifyCheck(t *testing.T) {
	pending := domain.PaymentState{Status: domain.StatusPending, Currency: "BRL", Amount: 1000}
	confirmed := pending
	confirmed.Status, confirmed.AmountCaptured = domain.StatusConfirmed, 1000
	refunded := confirmed
	refunded.Status, refunded.AmountRefunded = domain.StatusRefunded, 1000
	feed := confirmed
	feed.Fee, feed.FeeCurrency = 49, "BRL"
	later := confirmed
	later.EventCount, later.UpdatedAt, later.ReviewReasons = 9, time.Unix(9, 0), []string{"x"}
	tests := []struct {
		name          string
		before, after domain.PaymentState
		outcome       domain.CheckOutcome
		cause         domain.CorrectionCause
	}{
		{"same state", pending, pending, domain.OutcomeUnchanged, ""},
		{"counts and times are not a correction", confirmed, later, domain.OutcomeUnchanged, ""},
		{"pending moved on", pending, confirmed, domain.OutcomeCorrected, domain.CauseMissingWebhook},
		{"final payment refunded", confirmed, refunded, domain.OutcomeCorrected, domain.CauseDiverged},
		{"fee stated on a final payment", confirmed, feed, domain.OutcomeCorrected, domain.CauseDiverged},
		{"nothing known before", domain.PaymentState{}, confirmed, domain.OutcomeCorrected, domain.CauseMissingWebhook},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, c := domain.ClassifyCheck(tt.before, tt.after)
			if o != tt.outcome || c != tt.cause {
				t.Fatalf("ClassifyCheck = %s/%s, want %s/%s", o, c, tt.outcome, tt.cause)
			}
		})
	}
}

func TestStatusFinal(t *testing.T) {
	notFinal := map[domain.Status]bool{domain.StatusPending: true, domain.StatusAwaitingConfirmation: true,
		domain.StatusAuthorized: true, domain.StatusDisputed: true}
	for _, s := range domain.Statuses() {
		if s.Final() == notFinal[s] {
			t.Errorf("%s.Final() = %v", s, s.Final())
		}
	}
	if domain.Status("").Final() || domain.Status("bogus").Final() {
		t.Error("an unknown status is final")
	}
}

// A check in the stream changes neither the state nor the journal.
func TestFoldSkipsChecks(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	meta := func(id string, at time.Time) domain.Meta {
		return domain.Meta{Provider: "stripe", ProviderEventID: id, ProviderPaymentID: "pi_1", OccurredAt: at}
	}
	created := &domain.PaymentCreated{Meta: meta("evt_1", t0), Amount: 500, Currency: "USD"}
	paid := &domain.PaymentSucceeded{Meta: meta("evt_2", t0.Add(time.Minute)), Amount: 500, AmountReceived: 500, Currency: "USD"}
	check := &domain.ReconciliationChecked{Meta: meta(domain.CheckEventID("run-1", "pi_1"), t0.Add(time.Hour)),
		Run: "run-1", Trigger: domain.TriggerInDoubt, StatusBefore: domain.StatusConfirmed, StatusAfter: domain.StatusConfirmed,
		Outcome: domain.OutcomeUnchanged}
	early := *check
	early.Meta = meta(domain.CheckEventID("run-0", "pi_1"), t0.Add(-time.Hour))
	without := domain.Fold(created, paid).State()
	with := domain.Fold(&early, created, check, paid)
	if got := with.State(); got.EventCount != without.EventCount || got.UpdatedAt != without.UpdatedAt ||
		got.CreatedAt != without.CreatedAt || got.Status != without.Status {
		t.Fatalf("state with checks = %+v, want %+v", got, without)
	}
	if len(with.Events()) != 4 || !with.Has(check.Key()) {
		t.Fatalf("the fold dropped a check: %d events", len(with.Events()))
	}
	arrive := func(evs ...domain.Event) []domain.Arrival {
		var out []domain.Arrival
		for i, e := range evs {
			out = append(out, domain.Arrival{Event: e, EventID: e.EventMeta().Key(), RecordedAt: t0.Add(time.Duration(i) * time.Second)})
		}
		return out
	}
	plain := domain.Journal(arrive(created, paid))
	checked := domain.Journal(arrive(&early, created, check, paid))
	if len(plain) == 0 || len(checked) != len(plain) {
		t.Fatalf("journal with checks has %d entries, without %d", len(checked), len(plain))
	}
	for i := range plain {
		if plain[i].FactKey != checked[i].FactKey || len(plain[i].Lines) != len(checked[i].Lines) {
			t.Fatalf("entry %d differs: %+v vs %+v", i, checked[i], plain[i])
		}
	}
}
