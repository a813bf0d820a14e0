package domain_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// meta builds a Meta for payment pi_3Nk-x_Y at t0+sec.
func meta(id string, sec int) domain.Meta {
	return domain.Meta{Provider: "stripe", ProviderEventID: id, ProviderEventType: "test",
		ProviderPaymentID: "pi_3Nk-x_Y", OccurredAt: t0.Add(time.Duration(sec) * time.Second)}
}

func created(id string, sec int, amount int64) domain.Event {
	return &domain.PaymentCreated{Meta: meta(id, sec), Amount: amount, Currency: "USD"}
}
func processing(id string, sec int) domain.Event {
	return &domain.PaymentProcessing{Meta: meta(id, sec), Amount: 2000, Currency: "USD"}
}
func actionRequired(id string, sec int) domain.Event {
	return &domain.PaymentActionRequired{Meta: meta(id, sec), Amount: 2000, Currency: "USD"}
}
func authorized(id string, sec int) domain.Event {
	return &domain.PaymentAuthorized{Meta: meta(id, sec), Amount: 2000, AmountCapturable: 2000, Currency: "USD"}
}
func failed(id string, sec int) domain.Event {
	return &domain.PaymentFailed{Meta: meta(id, sec), Amount: 2000, Currency: "USD", Code: "card_declined"}
}
func cancelled(id string, sec int) domain.Event {
	return &domain.PaymentCancelled{Meta: meta(id, sec), Amount: 2000, Currency: "USD", Reason: "abandoned"}
}
func succeeded(id string, sec int, received int64) domain.Event {
	return &domain.PaymentSucceeded{Meta: meta(id, sec), Amount: 2000, AmountReceived: received, Currency: "USD"}
}
func refunded(id string, sec int, total int64) domain.Event {
	return &domain.PaymentRefunded{Meta: meta(id, sec), AmountRefunded: total, AmountCaptured: 2000, Currency: "USD"}
}
func disputeOpened(id string, sec int) domain.Event {
	return &domain.DisputeOpened{Meta: meta(id, sec), DisputeID: "dp_1", Amount: 2000, Currency: "USD"}
}
func disputeClosed(id string, sec int, o domain.DisputeOutcome) domain.Event {
	return &domain.DisputeClosed{Meta: meta(id, sec), DisputeID: "dp_1", Outcome: o, Amount: 2000, Currency: "USD"}
}

func TestFoldRules(t *testing.T) {
	tests := []struct {
		name         string
		given        []domain.Event
		wantStatus   domain.Status
		wantCaptured int64
		wantRefunded int64
		wantReasons  []string
	}{
		{name: "empty is no status", given: nil, wantStatus: ""},
		{name: "created is pending", given: []domain.Event{created("e1", 0, 2000)}, wantStatus: domain.StatusPending},
		{name: "processing awaits confirmation", given: []domain.Event{created("e1", 0, 2000), processing("e2", 1)}, wantStatus: domain.StatusAwaitingConfirmation},
		{name: "action required awaits confirmation", given: []domain.Event{created("e1", 0, 2000), actionRequired("e2", 1)}, wantStatus: domain.StatusAwaitingConfirmation},
		{name: "awaiting then authorized", given: []domain.Event{processing("e2", 1), authorized("e3", 2)}, wantStatus: domain.StatusAuthorized},
		{name: "awaiting then failed", given: []domain.Event{created("e1", 0, 2000), actionRequired("e2", 1), failed("e3", 1)}, wantStatus: domain.StatusFailed},
		{name: "awaiting then cancelled", given: []domain.Event{created("e1", 0, 2000), processing("e2", 1), cancelled("e3", 9)}, wantStatus: domain.StatusCancelled},
		{name: "awaiting then succeeded", given: []domain.Event{processing("e2", 1), created("e1", 0, 2000), succeeded("e3", 1, 2000)},
			wantStatus: domain.StatusConfirmed, wantCaptured: 2000},
		{name: "processing after authorized stays authorized", given: []domain.Event{created("e1", 0, 2000), authorized("e2", 1), processing("e3", 2)}, wantStatus: domain.StatusAuthorized},
		{name: "authorized", given: []domain.Event{created("e1", 0, 2000), authorized("e2", 1)}, wantStatus: domain.StatusAuthorized},
		{name: "failed", given: []domain.Event{created("e1", 0, 2000), failed("e2", 1)}, wantStatus: domain.StatusFailed},
		{name: "failed then success is confirmed", given: []domain.Event{created("e1", 0, 2000), failed("e2", 1), succeeded("e3", 5, 2000)},
			wantStatus: domain.StatusConfirmed, wantCaptured: 2000},
		{name: "failed and success in the same second is confirmed", given: []domain.Event{succeeded("e3", 1, 2000), failed("e2", 1), created("e1", 0, 2000)},
			wantStatus: domain.StatusConfirmed, wantCaptured: 2000},
		{name: "retry after failure awaits confirmation again", given: []domain.Event{created("e1", 0, 2000), failed("e2", 1), processing("e3", 2)}, wantStatus: domain.StatusAwaitingConfirmation},
		{name: "cancelled", given: []domain.Event{created("e1", 0, 2000), authorized("e2", 1), cancelled("e3", 2)}, wantStatus: domain.StatusCancelled},
		{name: "partial refund", given: []domain.Event{created("e1", 0, 2000), succeeded("e2", 1, 2000), refunded("e3", 2, 500)},
			wantStatus: domain.StatusPartiallyRefunded, wantCaptured: 2000, wantRefunded: 500},
		{name: "refunds accumulate to refunded", given: []domain.Event{created("e1", 0, 2000), succeeded("e2", 1, 2000), refunded("e3", 2, 500), refunded("e4", 3, 2000)},
			wantStatus: domain.StatusRefunded, wantCaptured: 2000, wantRefunded: 2000},
		{name: "cumulative refunds out of order keep the largest", given: []domain.Event{created("e1", 0, 2000), succeeded("e2", 1, 2000), refunded("e4", 3, 1500), refunded("e3", 3, 500)},
			wantStatus: domain.StatusPartiallyRefunded, wantCaptured: 2000, wantRefunded: 1500},
		{name: "refund without success implies capture", given: []domain.Event{refunded("e3", 2, 2000)},
			wantStatus: domain.StatusRefunded, wantCaptured: 2000, wantRefunded: 2000},
		{name: "dispute opened", given: []domain.Event{created("e1", 0, 2000), succeeded("e2", 1, 2000), disputeOpened("e3", 2)},
			wantStatus: domain.StatusDisputed, wantCaptured: 2000},
		{name: "dispute lost is chargeback", given: []domain.Event{created("e1", 0, 2000), succeeded("e2", 1, 2000), disputeOpened("e3", 2), disputeClosed("e4", 3, domain.DisputeLost)},
			wantStatus: domain.StatusChargeback, wantCaptured: 2000},
		{name: "dispute won returns to confirmed", given: []domain.Event{created("e1", 0, 2000), succeeded("e2", 1, 2000), disputeOpened("e3", 2), disputeClosed("e4", 3, domain.DisputeWon)},
			wantStatus: domain.StatusConfirmed, wantCaptured: 2000},
		{name: "dispute won returns to partially refunded", given: []domain.Event{created("e1", 0, 2000), succeeded("e2", 1, 2000), refunded("e5", 2, 300), disputeOpened("e3", 3), disputeClosed("e4", 4, domain.DisputeWon)},
			wantStatus: domain.StatusPartiallyRefunded, wantCaptured: 2000, wantRefunded: 300},
		{name: "refund during dispute is what a won dispute returns to", given: []domain.Event{created("e1", 0, 2000), succeeded("e2", 1, 2000), disputeOpened("e3", 2), refunded("e5", 3, 300), disputeClosed("e4", 4, domain.DisputeWon)},
			wantStatus: domain.StatusPartiallyRefunded, wantCaptured: 2000, wantRefunded: 300},
		{name: "open and close in the same second ends closed", given: []domain.Event{disputeClosed("e4", 2, domain.DisputeLost), disputeOpened("e3", 2), succeeded("e2", 1, 2000)},
			wantStatus: domain.StatusChargeback, wantCaptured: 2000},
		{name: "dispute closed never opened is flagged", given: []domain.Event{succeeded("e2", 1, 2000), disputeClosed("e4", 3, domain.DisputeWon)},
			wantStatus: domain.StatusConfirmed, wantCaptured: 2000, wantReasons: []string{domain.ReviewDisputeClosedNotOpen}},
		{name: "failure after success is flagged and ignored", given: []domain.Event{succeeded("e2", 1, 2000), failed("e3", 2)},
			wantStatus: domain.StatusConfirmed, wantCaptured: 2000, wantReasons: []string{domain.ReviewFailureAfterSuccess}},
		{name: "success after cancel wins and is flagged", given: []domain.Event{cancelled("e2", 1), succeeded("e3", 2, 2000)},
			wantStatus: domain.StatusConfirmed, wantCaptured: 2000, wantReasons: []string{domain.ReviewSuccessAfterCancel}},
		{name: "cancel after success is flagged", given: []domain.Event{succeeded("e2", 1, 2000), cancelled("e3", 2)},
			wantStatus: domain.StatusConfirmed, wantCaptured: 2000, wantReasons: []string{domain.ReviewCancelAfterSuccess}},
		{name: "refund over capture is flagged", given: []domain.Event{&domain.PaymentRefunded{Meta: meta("e1", 1), AmountRefunded: 3000, AmountCaptured: 2000, Currency: "USD"}},
			wantStatus: domain.StatusRefunded, wantCaptured: 2000, wantRefunded: 3000, wantReasons: []string{domain.ReviewRefundExceedsCapture}},
		{name: "currency mismatch is flagged and its amounts ignored", given: []domain.Event{succeeded("e2", 1, 2000), &domain.PaymentRefunded{Meta: meta("e3", 2), AmountRefunded: 2000, AmountCaptured: 2000, Currency: "EUR"}},
			wantStatus: domain.StatusConfirmed, wantCaptured: 2000, wantReasons: []string{domain.ReviewCurrencyMismatch}},
		{name: "foreign event is flagged and ignored", given: []domain.Event{created("e1", 0, 2000),
			&domain.PaymentSucceeded{Meta: domain.Meta{Provider: "stripe", ProviderEventID: "e9", ProviderPaymentID: "pi_other", OccurredAt: t0.Add(time.Second)}, Amount: 1, AmountReceived: 1, Currency: "USD"}},
			wantStatus: domain.StatusPending, wantReasons: []string{domain.ReviewForeignEvent}},
		{name: "conflicting duplicates are flagged", given: []domain.Event{created("e1", 0, 2000), created("e1", 0, 2500)},
			wantStatus: domain.StatusPending, wantReasons: []string{domain.ReviewConflictingDuplicates}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := domain.Fold(tt.given...).State()
			if s.Status != tt.wantStatus {
				t.Errorf("status = %q, want %q", s.Status, tt.wantStatus)
			}
			if s.AmountCaptured != tt.wantCaptured || s.AmountRefunded != tt.wantRefunded {
				t.Errorf("captured/refunded = %d/%d, want %d/%d", s.AmountCaptured, s.AmountRefunded, tt.wantCaptured, tt.wantRefunded)
			}
			if !slices.Equal(s.ReviewReasons, tt.wantReasons) {
				t.Errorf("review reasons = %v, want %v", s.ReviewReasons, tt.wantReasons)
			}
		})
	}
}

func TestFoldTracksMetadata(t *testing.T) {
	p := domain.Fold(refunded("e3", 30, 500), created("e1", 0, 2000), succeeded("e2", 10, 2000), succeeded("e2", 10, 2000))
	s := p.State()
	if s.EventCount != 3 {
		t.Errorf("EventCount = %d, want 3 (duplicate folded once)", s.EventCount)
	}
	if !s.CreatedAt.Equal(t0) || !s.UpdatedAt.Equal(t0.Add(30*time.Second)) {
		t.Errorf("created/updated = %v/%v", s.CreatedAt, s.UpdatedAt)
	}
	if s.Amount != 2000 || s.Currency != "USD" || s.Provider != "stripe" || s.ProviderPaymentID != "pi_3Nk-x_Y" {
		t.Errorf("state = %+v", s)
	}
	if !p.Has("e2") || p.Has("e9") {
		t.Errorf("Has: e2 %v, e9 %v", p.Has("e2"), p.Has("e9"))
	}
	got := p.Events()
	if len(got) != 3 || got[0].EventMeta().ProviderEventID != "e1" || got[2].EventMeta().ProviderEventID != "e3" {
		t.Errorf("Events not in fold order: %v", got)
	}
}

func TestEvolveMatchesFold(t *testing.T) {
	evs := []domain.Event{refunded("e4", 3, 2000), created("e1", 0, 2000), failed("e2", 1), succeeded("e3", 1, 2000)}
	var p domain.Payment
	for _, e := range evs {
		p = domain.Evolve(p, e)
	}
	want := domain.Fold(evs...).State()
	if got := p.State(); !equalState(got, want) {
		t.Errorf("Evolve one by one = %+v, Fold = %+v", got, want)
	}
	if want.Status != domain.StatusRefunded {
		t.Errorf("status = %s, want refunded (full refund delivered first)", want.Status)
	}
}

func TestEvolveDoesNotMutate(t *testing.T) {
	p := domain.Fold(created("e1", 0, 2000))
	before := p.State()
	_ = domain.Evolve(p, succeeded("e2", 1, 2000))
	if after := p.State(); !equalState(before, after) {
		t.Errorf("Evolve changed its argument: %+v -> %+v", before, after)
	}
}

func TestMetaKey(t *testing.T) {
	m := domain.Meta{ProviderEventID: "hook_1"}
	if m.Key() != "hook_1" {
		t.Errorf("Key = %q", m.Key())
	}
	m.SubKey = "ch_2"
	if m.Key() != "hook_1:ch_2" {
		t.Errorf("Key with sub-key = %q", m.Key())
	}
}

func equalState(a, b domain.PaymentState) bool {
	if !slices.Equal(a.ReviewReasons, b.ReviewReasons) || !a.CreatedAt.Equal(b.CreatedAt) || !a.UpdatedAt.Equal(b.UpdatedAt) {
		return false
	}
	a.ReviewReasons, b.ReviewReasons = nil, nil
	a.CreatedAt, b.CreatedAt, a.UpdatedAt, b.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}
