package asaas

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func observed(event, status, detail string, st domain.Status, amount, captured, refunded int64) *domain.PaymentStatusObserved {
	return &domain.PaymentStatusObserved{Meta: vmeta(event), Status: st, ProviderStatus: status,
		ProviderStatusDetail: detail, Amount: amount, AmountCaptured: captured, AmountRefunded: refunded, Currency: "BRL"}
}

// TestParseEvents maps every PAYMENT_* event the spec lists (and a few more)
// from the spec vector.
func TestParseEvents(t *testing.T) {
	notified := func(event string) domain.Event {
		return &domain.PaymentNotified{Meta: vmeta(event), Action: event}
	}
	tests := []struct {
		name  string
		body  []byte
		want  domain.Event
		noFee bool // the payment states no fee we can book
	}{
		{name: "spec vector", body: payload(t, nil), want: observed("PAYMENT_RECEIVED", "RECEIVED", "received", domain.StatusConfirmed, 10000, 10000, 0)},
		{name: "PAYMENT_CREATED", body: event(t, "PAYMENT_CREATED", "PENDING"),
			want: observed("PAYMENT_CREATED", "PENDING", "", domain.StatusAwaitingConfirmation, 10000, 0, 0)},
		{name: "PAYMENT_AWAITING_RISK_ANALYSIS", body: event(t, "PAYMENT_AWAITING_RISK_ANALYSIS", "AWAITING_RISK_ANALYSIS"),
			want: observed("PAYMENT_AWAITING_RISK_ANALYSIS", "AWAITING_RISK_ANALYSIS", "", domain.StatusAwaitingConfirmation, 10000, 0, 0)},
		{name: "PAYMENT_APPROVED_BY_RISK_ANALYSIS", body: event(t, "PAYMENT_APPROVED_BY_RISK_ANALYSIS", "PENDING"),
			want: observed("PAYMENT_APPROVED_BY_RISK_ANALYSIS", "PENDING", "", domain.StatusAwaitingConfirmation, 10000, 0, 0)},
		{name: "PAYMENT_REPROVED_BY_RISK_ANALYSIS", body: event(t, "PAYMENT_REPROVED_BY_RISK_ANALYSIS", "PENDING"),
			want: observed("PAYMENT_REPROVED_BY_RISK_ANALYSIS", "PENDING", "", domain.StatusFailed, 10000, 0, 0)},
		{name: "PAYMENT_AUTHORIZED", body: event(t, "PAYMENT_AUTHORIZED", "AUTHORIZED"),
			want: observed("PAYMENT_AUTHORIZED", "AUTHORIZED", "", domain.StatusAuthorized, 10000, 0, 0)},
		{name: "PAYMENT_CONFIRMED", body: event(t, "PAYMENT_CONFIRMED", "CONFIRMED"),
			want: observed("PAYMENT_CONFIRMED", "CONFIRMED", "", domain.StatusConfirmed, 10000, 10000, 0)},
		{name: "PAYMENT_RECEIVED", body: event(t, "PAYMENT_RECEIVED", "RECEIVED"),
			want: observed("PAYMENT_RECEIVED", "RECEIVED", "received", domain.StatusConfirmed, 10000, 10000, 0)},
		{name: "PAYMENT_RECEIVED_IN_CASH", body: event(t, "PAYMENT_RECEIVED_IN_CASH", "RECEIVED_IN_CASH"),
			want: observed("PAYMENT_RECEIVED_IN_CASH", "RECEIVED_IN_CASH", "received_in_cash", domain.StatusConfirmed, 10000, 10000, 0)},
		{name: "PAYMENT_CREDIT_CARD_CAPTURE_REFUSED", body: event(t, "PAYMENT_CREDIT_CARD_CAPTURE_REFUSED", "PENDING"),
			want: observed("PAYMENT_CREDIT_CARD_CAPTURE_REFUSED", "PENDING", "", domain.StatusFailed, 10000, 0, 0)},
		{name: "PAYMENT_OVERDUE", body: event(t, "PAYMENT_OVERDUE", "OVERDUE"),
			want: observed("PAYMENT_OVERDUE", "OVERDUE", "", domain.StatusAwaitingConfirmation, 10000, 0, 0)},
		{name: "PAYMENT_OVERDUE without payment.status", body: payload(t, edits{"event": "PAYMENT_OVERDUE", "payment.status": remove{}}),
			want: observed("PAYMENT_OVERDUE", "OVERDUE", "", domain.StatusAwaitingConfirmation, 10000, 0, 0)},
		{name: "PAYMENT_DELETED", body: payload(t, edits{"event": "PAYMENT_DELETED", "payment.status": "PENDING", "payment.deleted": true}),
			want: observed("PAYMENT_DELETED", "PENDING", "deleted", domain.StatusCancelled, 10000, 0, 0)},
		{name: "PAYMENT_RESTORED", body: event(t, "PAYMENT_RESTORED", "PENDING"),
			want: observed("PAYMENT_RESTORED", "PENDING", "", domain.StatusAwaitingConfirmation, 10000, 0, 0)},
		{name: "PAYMENT_REFUNDED", body: payload(t, edits{"event": "PAYMENT_REFUNDED", "payment.status": "REFUNDED",
			"payment.refunds": refunds("DONE", "100.00")}),
			want: observed("PAYMENT_REFUNDED", "REFUNDED", "", domain.StatusRefunded, 10000, 10000, 10000)},
		{name: "PAYMENT_REFUNDED without refunds", body: event(t, "PAYMENT_REFUNDED", "REFUNDED"),
			want: observed("PAYMENT_REFUNDED", "REFUNDED", "", domain.StatusRefunded, 10000, 10000, 10000)},
		{name: "PAYMENT_PARTIALLY_REFUNDED", body: payload(t, edits{"event": "PAYMENT_PARTIALLY_REFUNDED", "payment.status": "RECEIVED",
			"payment.refunds": refunds("DONE", "30.10", "PENDING", "5", "CANCELLED", "10.00", "DONE", "0.05")}),
			want: observed("PAYMENT_PARTIALLY_REFUNDED", "RECEIVED", "", domain.StatusPartiallyRefunded, 10000, 10000, 3015)},
		{name: "PAYMENT_REFUND_IN_PROGRESS", body: event(t, "PAYMENT_REFUND_IN_PROGRESS", "REFUND_IN_PROGRESS"),
			want: observed("PAYMENT_REFUND_IN_PROGRESS", "REFUND_IN_PROGRESS", "refund_in_progress", domain.StatusConfirmed, 10000, 10000, 0)},
		{name: "PAYMENT_REFUND_IN_PROGRESS without payment.status", body: payload(t, edits{"event": "PAYMENT_REFUND_IN_PROGRESS", "payment.status": remove{}}),
			want: observed("PAYMENT_REFUND_IN_PROGRESS", "REFUND_IN_PROGRESS", "refund_in_progress", domain.StatusConfirmed, 10000, 10000, 0)},
		{name: "PAYMENT_REFUND_IN_PROGRESS after a partial refund", body: payload(t, edits{"event": "PAYMENT_REFUND_IN_PROGRESS",
			"payment.status": "REFUND_IN_PROGRESS", "payment.refunds": refunds("DONE", "40", "PENDING", "60")}),
			want: observed("PAYMENT_REFUND_IN_PROGRESS", "REFUND_IN_PROGRESS", "refund_in_progress", domain.StatusPartiallyRefunded, 10000, 10000, 4000)},
		{name: "PAYMENT_RECEIVED_IN_CASH_UNDONE", body: event(t, "PAYMENT_RECEIVED_IN_CASH_UNDONE", "PENDING"),
			want: observed("PAYMENT_RECEIVED_IN_CASH_UNDONE", "PENDING", "", domain.StatusAwaitingConfirmation, 10000, 0, 0)},
		{name: "PAYMENT_CHARGEBACK_REQUESTED", body: event(t, "PAYMENT_CHARGEBACK_REQUESTED", "CHARGEBACK_REQUESTED"),
			want: observed("PAYMENT_CHARGEBACK_REQUESTED", "CHARGEBACK_REQUESTED", "", domain.StatusChargeback, 10000, 10000, 0)},
		{name: "PAYMENT_CHARGEBACK_DISPUTE", body: event(t, "PAYMENT_CHARGEBACK_DISPUTE", "CHARGEBACK_DISPUTE"),
			want: observed("PAYMENT_CHARGEBACK_DISPUTE", "CHARGEBACK_DISPUTE", "", domain.StatusDisputed, 10000, 10000, 0)},
		{name: "PAYMENT_AWAITING_CHARGEBACK_REVERSAL", body: event(t, "PAYMENT_AWAITING_CHARGEBACK_REVERSAL", "AWAITING_CHARGEBACK_REVERSAL"),
			want: observed("PAYMENT_AWAITING_CHARGEBACK_REVERSAL", "AWAITING_CHARGEBACK_REVERSAL", "", domain.StatusDisputed, 10000, 10000, 0)},
		// Informational: facts that change no status.
		{name: "PAYMENT_UPDATED", body: event(t, "PAYMENT_UPDATED", "PENDING"), want: notified("PAYMENT_UPDATED")},
		{name: "PAYMENT_ANTICIPATED", body: event(t, "PAYMENT_ANTICIPATED", "RECEIVED"), want: notified("PAYMENT_ANTICIPATED")},
		{name: "PAYMENT_BANK_SLIP_VIEWED", body: event(t, "PAYMENT_BANK_SLIP_VIEWED", "PENDING"), want: notified("PAYMENT_BANK_SLIP_VIEWED")},
		{name: "PAYMENT_CHECKOUT_VIEWED", body: event(t, "PAYMENT_CHECKOUT_VIEWED", "PENDING"), want: notified("PAYMENT_CHECKOUT_VIEWED")},
		{name: "PAYMENT_DUNNING_REQUESTED", body: event(t, "PAYMENT_DUNNING_REQUESTED", "DUNNING_REQUESTED"), want: notified("PAYMENT_DUNNING_REQUESTED")},
		{name: "PAYMENT_DUNNING_RECEIVED", body: event(t, "PAYMENT_DUNNING_RECEIVED", "DUNNING_RECEIVED"), want: notified("PAYMENT_DUNNING_RECEIVED")},
		{name: "PAYMENT_SPLIT_DIVERGENCE_BLOCK", body: event(t, "PAYMENT_SPLIT_DIVERGENCE_BLOCK", "RECEIVED"), want: notified("PAYMENT_SPLIT_DIVERGENCE_BLOCK")},
		{name: "PAYMENT_SPLIT_DIVERGENCE_BLOCK_FINISHED", body: event(t, "PAYMENT_SPLIT_DIVERGENCE_BLOCK_FINISHED", "RECEIVED"), want: notified("PAYMENT_SPLIT_DIVERGENCE_BLOCK_FINISHED")},
		{name: "PAYMENT_REFUND_DENIED", body: event(t, "PAYMENT_REFUND_DENIED", "RECEIVED"), want: notified("PAYMENT_REFUND_DENIED")},
		{name: "unknown PAYMENT_ event", body: event(t, "PAYMENT_TELEPORTED", "RECEIVED"), want: notified("PAYMENT_TELEPORTED")},
		{name: "informational with a value we would reject", body: payload(t, edits{"event": "PAYMENT_UPDATED", "payment.value": json.Number("0.005")}),
			want: notified("PAYMENT_UPDATED"), noFee: true},
		{name: "informational without value", body: payload(t, edits{"event": "PAYMENT_CHECKOUT_VIEWED", "payment.value": remove{}}),
			want: notified("PAYMENT_CHECKOUT_VIEWED"), noFee: true},
	}
	p := newProvider(t, Config{Tokens: []string{testToken}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := p.Parse(t.Context(), tokenHeader(testToken), nil, tt.body)
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			m := tt.want.EventMeta()
			wantN := domain.Notification{Provider: "asaas", ProviderEventID: vectorEventID,
				ProviderEventType: m.ProviderEventType, Events: []domain.Event{tt.want}}
			if !tt.noFee {
				// The vector's value 100 and netValue 94.51: a fee of 5.49,
				// carried by a lifecycle snapshot, beside a notification.
				if obs, ok := tt.want.(*domain.PaymentStatusObserved); ok {
					obs.Fee, obs.FeeCurrency, obs.FeeSource = 549, "BRL", "netValue"
				} else {
					wantN.Events = append(wantN.Events, vfee(m.ProviderEventType, 549))
				}
			}
			if !reflect.DeepEqual(n, wantN) {
				t.Fatalf("Parse() =\n %+v\nwant\n %+v", describe(n), describe(wantN))
			}
		})
	}
}

// TestParseCoversSpecEvents keeps TestParseEvents in step with the spec's
// list of payment events: each is either a lifecycle event or deliberately
// informational.
func TestParseCoversSpecEvents(t *testing.T) {
	spec := []string{"PAYMENT_CREATED", "PAYMENT_AWAITING_RISK_ANALYSIS", "PAYMENT_APPROVED_BY_RISK_ANALYSIS",
		"PAYMENT_REPROVED_BY_RISK_ANALYSIS", "PAYMENT_AUTHORIZED", "PAYMENT_UPDATED", "PAYMENT_CONFIRMED",
		"PAYMENT_RECEIVED", "PAYMENT_CREDIT_CARD_CAPTURE_REFUSED", "PAYMENT_ANTICIPATED", "PAYMENT_OVERDUE",
		"PAYMENT_DELETED", "PAYMENT_RESTORED", "PAYMENT_REFUNDED", "PAYMENT_PARTIALLY_REFUNDED",
		"PAYMENT_REFUND_IN_PROGRESS", "PAYMENT_RECEIVED_IN_CASH_UNDONE", "PAYMENT_CHARGEBACK_REQUESTED",
		"PAYMENT_CHARGEBACK_DISPUTE", "PAYMENT_AWAITING_CHARGEBACK_REVERSAL", "PAYMENT_DUNNING_RECEIVED",
		"PAYMENT_DUNNING_REQUESTED", "PAYMENT_BANK_SLIP_VIEWED", "PAYMENT_CHECKOUT_VIEWED",
		"PAYMENT_SPLIT_DIVERGENCE_BLOCK", "PAYMENT_SPLIT_DIVERGENCE_BLOCK_FINISHED", "PAYMENT_REFUND_DENIED"}
	informational := map[string]bool{"PAYMENT_UPDATED": true, "PAYMENT_ANTICIPATED": true, "PAYMENT_DUNNING_RECEIVED": true,
		"PAYMENT_DUNNING_REQUESTED": true, "PAYMENT_BANK_SLIP_VIEWED": true, "PAYMENT_CHECKOUT_VIEWED": true,
		"PAYMENT_SPLIT_DIVERGENCE_BLOCK": true, "PAYMENT_SPLIT_DIVERGENCE_BLOCK_FINISHED": true, "PAYMENT_REFUND_DENIED": true}
	for _, ev := range spec {
		if _, lifecycle := lifecycleOf(ev); lifecycle == informational[ev] {
			t.Errorf("%s: lifecycle=%v, informational=%v", ev, lifecycle, informational[ev])
		}
	}
}

func TestParseIgnored(t *testing.T) {
	p := newProvider(t, Config{Tokens: []string{testToken}})
	tests := []struct {
		name, body, wantReason string
	}{
		{name: "transfer", body: `{"id":"evt_9f&1","event":"TRANSFER_DONE","dateCreated":"2024-06-12 10:00:00","transfer":{"id":"tra_1","value":5}}`,
			wantReason: "event TRANSFER_DONE is not a payment event"},
		{name: "invoice, no date", body: `{"id":"evt_9f&2","event":"INVOICE_CREATED","invoice":{"id":"inv_1"}}`,
			wantReason: "event INVOICE_CREATED is not a payment event"},
		{name: "re-cased payment event", body: `{"id":"evt_9f&3","event":"payment_received","dateCreated":"x","payment":{"id":"pay_1"}}`,
			wantReason: "event payment_received is not a payment event"},
		{name: "bare PAYMENT", body: `{"id":"evt_9f&4","event":"PAYMENT","payment":7}`,
			wantReason: "event PAYMENT is not a payment event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := p.Parse(t.Context(), nil, nil, []byte(tt.body))
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if len(n.Events) != 0 || n.IgnoredReason != tt.wantReason || n.Provider != "asaas" || n.ProviderEventID == "" {
				t.Fatalf("Parse() = %+v, want ignored with %q", n, tt.wantReason)
			}
		})
	}
}

func TestParseDateCreated(t *testing.T) {
	sp := newProvider(t, Config{Tokens: []string{"tok"}})
	utc := newProvider(t, Config{Tokens: []string{"tok"}, Location: time.UTC})
	tests := []struct {
		name    string
		p       *Provider
		date    string
		want    time.Time // zero: KindInvalid
		wantErr string
	}{
		{name: "vector, UTC-3", p: sp, date: "2024-06-12 16:45:03", want: vectorOccurred},
		{name: "midnight rolls the UTC day", p: sp, date: "2024-12-31 22:30:00", want: time.Date(2025, 1, 1, 1, 30, 0, 0, time.UTC)},
		{name: "configured UTC", p: utc, date: "2024-06-12 16:45:03", want: time.Date(2024, 6, 12, 16, 45, 3, 0, time.UTC)},
		// DST 2018: at 2018-11-04 00:00 (-03) clocks jumped to 01:00 (-02).
		{name: "last second before the 2018 gap", p: sp, date: "2018-11-03 23:59:59", want: time.Date(2018, 11, 4, 2, 59, 59, 0, time.UTC)},
		{name: "first second after the 2018 gap", p: sp, date: "2018-11-04 01:00:00", want: time.Date(2018, 11, 4, 3, 0, 0, 0, time.UTC)},
		// 00:30 never existed. Go reads it with the offset after the gap
		// (-02), which lands at 23:30 standard time on the 3rd.
		{name: "inside the 2018 gap", p: sp, date: "2018-11-04 00:30:00", want: time.Date(2018, 11, 4, 2, 30, 0, 0, time.UTC)},
		// At 2019-02-17 00:00 (-02) clocks went back to 23:00 (-03): 23:30 on
		// the 16th happened twice; Go takes the first (-02).
		{name: "ambiguous at the 2019 fall-back", p: sp, date: "2019-02-16 23:30:00", want: time.Date(2019, 2, 17, 1, 30, 0, 0, time.UTC)},
		{name: "after the 2019 fall-back", p: sp, date: "2019-02-17 00:30:00", want: time.Date(2019, 2, 17, 3, 30, 0, 0, time.UTC)},
		{name: "explicit offset honoured", p: sp, date: "2024-06-12T16:45:03-03:00", want: vectorOccurred},
		{name: "explicit Z honoured", p: sp, date: "2024-06-12T19:45:03Z", want: vectorOccurred},
		{name: "last marshalable second", p: sp, date: "9999-12-31 20:59:59", want: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
		{name: "past year 9999 in UTC", p: sp, date: "9999-12-31 21:00:00", wantErr: "out of range"},
		{name: "before 1970", p: sp, date: "1969-12-31 20:59:59", wantErr: "out of range"},
		{name: "missing", p: sp, date: "", wantErr: "dateCreated is missing"},
		{name: "date only", p: sp, date: "2024-06-12", wantErr: "is not YYYY-MM-DD HH:MM:SS"},
		{name: "Brazilian order", p: sp, date: "12/06/2024 16:45:03", wantErr: "is not YYYY-MM-DD HH:MM:SS"},
		{name: "hour 25", p: sp, date: "2024-06-12 25:00:00", wantErr: "is not YYYY-MM-DD HH:MM:SS"},
		{name: "trailing zone name", p: sp, date: "2024-06-12 16:45:03 BRT", wantErr: "is not YYYY-MM-DD HH:MM:SS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := tt.p.Parse(t.Context(), nil, nil, payload(t, edits{"dateCreated": tt.date}))
			if tt.wantErr != "" {
				if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse() = %v, want KindInvalid mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			got := n.Events[0].EventMeta().OccurredAt
			if !got.Equal(tt.want) || got.Location() != time.UTC {
				t.Fatalf("OccurredAt = %v, want %v in UTC", got, tt.want)
			}
			if _, err := json.Marshal(n.Events[0]); err != nil {
				t.Fatalf("event does not marshal: %v", err)
			}
		})
	}
}

func TestParseAmounts(t *testing.T) {
	p := newProvider(t, Config{Tokens: []string{"tok"}})
	tests := []struct {
		name         string
		e            edits
		wantAmount   int64
		wantRefunded int64
		wantErr      string // non-empty: KindInvalid mentioning it
	}{
		{name: "1.10", e: edits{"payment.value": json.Number("1.10")}, wantAmount: 110},
		{name: "1.1", e: edits{"payment.value": json.Number("1.1")}, wantAmount: 110},
		{name: "100", e: edits{"payment.value": json.Number("100")}, wantAmount: 10000},
		{name: "trailing zeros", e: edits{"payment.value": json.Number("100.000")}, wantAmount: 10000},
		{name: "0.1+0.2 exactly", e: edits{"payment.value": json.Number("0.30")}, wantAmount: 30},
		{name: "zero", e: edits{"payment.value": json.Number("0")}, wantAmount: 0},
		{name: "quoted number", e: edits{"payment.value": "19.99"}, wantAmount: 1999},
		{name: "max int64 centavos", e: edits{"payment.value": json.Number("92233720368547758.07")}, wantAmount: 9223372036854775807},
		{name: "0.005", e: edits{"payment.value": json.Number("0.005")}, wantErr: "more than 2 decimal places"},
		{name: "exponent", e: edits{"payment.value": json.Number("1e2")}, wantErr: "payment.value"},
		{name: "negative", e: edits{"payment.value": json.Number("-1.00")}, wantErr: "payment.value is negative"},
		{name: "overflow", e: edits{"payment.value": json.Number("92233720368547758.08")}, wantErr: "out of range"},
		{name: "missing", e: edits{"payment.value": remove{}}, wantErr: "payment.value is missing"},
		{name: "null", e: edits{"payment.value": nil}, wantErr: "payment.value is missing"},
		{name: "boolean", e: edits{"payment.value": true}, wantErr: "payment.value"},
		{name: "quoted words", e: edits{"payment.value": "cem reais"}, wantErr: "malformed payment"},
		{name: "refunds: DONE only, exact", e: edits{"event": "PAYMENT_PARTIALLY_REFUNDED", "payment.refunds": refunds(
			"DONE", "0.10", "DONE", "0.20", "PENDING", "50", "CANCELLED", "50", "done", "1")}, wantAmount: 10000, wantRefunded: 30},
		{name: "refunds null", e: edits{"event": "PAYMENT_PARTIALLY_REFUNDED", "payment.refunds": nil}, wantAmount: 10000},
		{name: "refunds: bad DONE value", e: edits{"event": "PAYMENT_PARTIALLY_REFUNDED", "payment.refunds": refunds("DONE", "0.001")},
			wantErr: "payment.refunds[].value"},
		{name: "refunds: bad PENDING value unread", e: edits{"event": "PAYMENT_PARTIALLY_REFUNDED", "payment.refunds": refunds("PENDING", "0.001")},
			wantAmount: 10000},
		{name: "refunds: sum overflows", e: edits{"event": "PAYMENT_PARTIALLY_REFUNDED", "payment.refunds": refunds(
			"DONE", "92233720368547758.07", "DONE", "0.01")}, wantErr: "refunds total is out of range"},
		{name: "refunds not an array", e: edits{"payment.refunds": "none"}, wantErr: "malformed payment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := p.Parse(t.Context(), nil, nil, payload(t, tt.e))
			if tt.wantErr != "" {
				if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse() = %v, want KindInvalid mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			obs := n.Events[0].(*domain.PaymentStatusObserved)
			if obs.Amount != tt.wantAmount || obs.AmountRefunded != tt.wantRefunded || obs.Currency != "BRL" {
				t.Fatalf("amount %d refunded %d %s, want %d refunded %d BRL", obs.Amount, obs.AmountRefunded, obs.Currency,
					tt.wantAmount, tt.wantRefunded)
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	p := newProvider(t, Config{Tokens: []string{"tok"}})
	vector := payload(t, nil)
	tests := []struct {
		name    string
		body    []byte
		wantErr string
	}{
		{name: "empty", body: nil, wantErr: "malformed webhook JSON"},
		{name: "truncated", body: vector[:len(vector)/2], wantErr: "malformed webhook JSON"},
		{name: "trailing garbage", body: append(append([]byte{}, vector...), "}x"...), wantErr: "malformed webhook JSON"},
		{name: "array", body: []byte(`[]`), wantErr: "malformed webhook JSON"},
		{name: "null", body: []byte(`null`), wantErr: "event is missing"},
		{name: "id a number", body: payload(t, edits{"id": json.Number("368604920")}), wantErr: "id has the wrong type"},
		{name: "id with a space", body: payload(t, edits{"id": "evt_1 &2"}), wantErr: "id contains whitespace"},
		{name: "id with a newline", body: payload(t, edits{"id": "evt_1\n"}), wantErr: "id contains whitespace"},
		{name: "id too long", body: payload(t, edits{"id": "evt_" + strings.Repeat("a", 252)}), wantErr: "id is longer than 255"},
		{name: "event missing", body: payload(t, edits{"event": remove{}}), wantErr: "event is missing"},
		{name: "payment missing", body: payload(t, edits{"payment": remove{}}), wantErr: "payment is missing or not an object"},
		{name: "payment null", body: payload(t, edits{"payment": nil}), wantErr: "payment is missing or not an object"},
		{name: "payment a string", body: payload(t, edits{"payment": "pay_080225913252"}), wantErr: "payment is missing or not an object"},
		{name: "payment.id missing", body: payload(t, edits{"payment.id": remove{}}), wantErr: "payment.id is missing"},
		{name: "payment.id empty, informational", body: payload(t, edits{"event": "PAYMENT_UPDATED", "payment.id": ""}), wantErr: "payment.id is missing"},
		{name: "payment.id with a tab", body: payload(t, edits{"payment.id": "pay_\t1"}), wantErr: "payment.id contains whitespace"},
		{name: "payment.status a number", body: payload(t, edits{"payment.status": json.Number("1")}), wantErr: "status has the wrong type"},
		{name: "invalid UTF-8 id", body: []byte("{\"id\":\"evt_\xff\",\"event\":\"PAYMENT_RECEIVED\"}"), wantErr: "id contains"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := p.Parse(t.Context(), nil, nil, tt.body)
			if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Parse() = %+v, %v; want KindInvalid mentioning %q", n, err, tt.wantErr)
			}
		})
	}
}

// TestParseLenient: Asaas adds attributes at any time; they change nothing.
func TestParseLenient(t *testing.T) {
	p := newProvider(t, Config{Tokens: []string{testToken}})
	plain, err := p.Parse(t.Context(), nil, nil, payload(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	extra := payload(t, edits{
		"newTopLevel":           map[string]any{"nested": []any{1, "two", nil}},
		"payment.split":         []any{map[string]any{"walletId": "w_1", "fixedValue": json.Number("1.5")}},
		"payment.discount":      map[string]any{"value": json.Number("0"), "type": "FIXED"},
		"payment.invoiceUrl":    "https://www.asaas.com/i/080225913252",
		"payment.anticipated":   false,
		"payment.somethingNew":  json.Number("1e400"),
		"payment.deleted":       nil,
		"payment.originalValue": nil,
	})
	got, err := p.Parse(t.Context(), tokenHeader(testToken), nil, extra)
	if err != nil {
		t.Fatalf("Parse() with extra fields: %v", err)
	}
	if !reflect.DeepEqual(got, plain) {
		t.Fatalf("extra fields changed the result:\n %+v\n %+v", describe(got), describe(plain))
	}
	if got.SignatureHeader != "" {
		t.Fatalf("SignatureHeader = %q: the bearer token must not be stored", got.SignatureHeader)
	}
}

// describe renders a Notification with its events dereferenced.
func describe(n domain.Notification) string {
	b, _ := json.Marshal(struct {
		N      domain.Notification
		Events []domain.Event
	}{n, n.Events})
	return string(b)
}

// TestParseWithoutEventID: deliveries from webhook configurations older than
// Asaas's event IDs get an ID derived from their bytes: the same delivery
// retried is the same fact, another delivery is another.
func TestParseWithoutEventID(t *testing.T) {
	p := newProvider(t, Config{Tokens: []string{"tok"}})
	body := payload(t, edits{"id": remove{}})
	a, err := p.Parse(t.Context(), nil, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Parse(t.Context(), nil, nil, append([]byte(nil), body...))
	if err != nil {
		t.Fatal(err)
	}
	if a.ProviderEventID == "" || a.ProviderEventID != b.ProviderEventID || len(a.Events) != 1 {
		t.Fatalf("derived IDs %q and %q for one delivery", a.ProviderEventID, b.ProviderEventID)
	}
	other, err := p.Parse(t.Context(), nil, nil, payload(t, edits{"id": remove{}, "event": "PAYMENT_CONFIRMED"}))
	if err != nil {
		t.Fatal(err)
	}
	if other.ProviderEventID == a.ProviderEventID {
		t.Errorf("two deliveries share the derived ID %q", a.ProviderEventID)
	}
}
