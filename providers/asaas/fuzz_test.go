package asaas

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/rest"
)

func FuzzVerify(f *testing.F) {
	f.Add(testToken, testToken, "tok_old")
	f.Add(strings.Repeat("A", len(testToken)), testToken, "tok_old")
	f.Add("tok_old", testToken, "tok_old")
	f.Add("", "a", "b")
	f.Add(" a", "a", "b")
	f.Add("a\x00", "a", "a\x00b")
	f.Add("ção", "ção", "cao")
	f.Fuzz(func(t *testing.T, got, tok1, tok2 string) {
		if tok1 == "" || tok2 == "" || strings.TrimSpace(tok1) != tok1 || strings.TrimSpace(tok2) != tok2 {
			return // New rejects these; TestNew covers it
		}
		p := newProvider(t, Config{Tokens: []string{tok1, tok2}})
		for _, tok := range []string{tok1, tok2} {
			if err := p.Verify(t.Context(), tokenHeader(tok), nil, nil, time.Time{}); err != nil {
				t.Fatalf("configured token rejected: %v", err)
			}
		}
		err := p.Verify(t.Context(), tokenHeader(got), nil, nil, time.Time{})
		if want := got != "" && (got == tok1 || got == tok2); (err == nil) != want {
			t.Fatalf("Verify(%q) with tokens %q, %q = %v; want accepted=%v", got, tok1, tok2, err, want)
		}
		if err == nil {
			return
		}
		// The error is one of two fixed texts: nothing about the tokens leaks.
		if domain.KindOf(err) != domain.KindUnauthorized || !slices.Contains([]string{
			"asaas: verify: asaas-access-token header is missing: no access token",
			"asaas: verify: asaas-access-token does not match a configured token: wrong access token",
		}, err.Error()) {
			t.Fatalf("Verify(%q) error %q", got, err)
		}
	})
}

func FuzzParse(f *testing.F) {
	vector, err := os.ReadFile("testdata/vectors/asaas_payload.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(vector)
	for _, e := range []edits{
		{"event": "PAYMENT_REFUNDED", "payment.status": "REFUNDED", "payment.refunds": refunds("DONE", "100.00")},
		{"event": "PAYMENT_PARTIALLY_REFUNDED", "payment.refunds": refunds("DONE", "0.01", "PENDING", "1", "DONE", "99.99")},
		{"event": "PAYMENT_REFUND_IN_PROGRESS", "payment.status": "WHATEVER"},
		{"event": "PAYMENT_BANK_SLIP_VIEWED", "payment.value": remove{}},
		{"event": "PAYMENT_DELETED", "payment.deleted": true, "dateCreated": "2018-11-04 00:30:00"},
		{"event": "PAYMENT_CHARGEBACK_DISPUTE", "dateCreated": "9999-12-31 20:59:59", "payment.value": json.Number("92233720368547758.07")},
		{"event": "TRANSFER_DONE", "payment": remove{}},
		{"event": "PAYMENT_CONFIRMED", "payment.netValue": json.Number("100.00")},
		{"event": "PAYMENT_CONFIRMED", "payment.netValue": json.Number("100.01")},
		{"event": "PAYMENT_UPDATED", "payment.netValue": json.Number("94.515")},
		{"event": "PAYMENT_RECEIVED", "payment.netValue": nil},
		{"event": "PAYMENT_RECEIVED", "payment.netValue": "94.51"},
	} {
		f.Add(payload(f, e))
	}
	p := newProvider(f, Config{Tokens: []string{testToken}})
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := p.Parse(t.Context(), tokenHeader(testToken), nil, body)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
				t.Fatalf("Parse error %v is not KindInvalid with a message", err)
			}
			return
		}
		again, err := p.Parse(t.Context(), nil, nil, body)
		if err != nil || !reflect.DeepEqual(n, again) {
			t.Fatalf("Parse is not deterministic: %+v, %v", again, err)
		}
		if n.Provider != "asaas" || checkID("id", n.ProviderEventID) != nil || checkID("event", n.ProviderEventType) != nil ||
			n.SignatureHeader != "" {
			t.Fatalf("notification identity %+v", n)
		}
		if (len(n.Events) == 0) == (n.IgnoredReason == "") || len(n.Events) > 2 ||
			(len(n.Events) > 0) != strings.HasPrefix(n.ProviderEventType, "PAYMENT_") {
			t.Fatalf("%d events with ignored reason %q for %s", len(n.Events), n.IgnoredReason, n.ProviderEventType)
		}
		if len(n.Events) == 2 {
			checkFee(t, n.Events[0], n.Events[1])
		}
		for _, ev := range n.Events {
			checkEvent(t, n, ev)
		}
	})
}

// FuzzStatusMapper checks the payment.status mapping and the observation
// the status client builds from an answer, without the network.
func FuzzStatusMapper(f *testing.F) {
	enum := []string{"PENDING", "RECEIVED", "CONFIRMED", "OVERDUE", "REFUNDED", "RECEIVED_IN_CASH",
		"REFUND_REQUESTED", "REFUND_IN_PROGRESS", "CHARGEBACK_REQUESTED", "CHARGEBACK_DISPUTE",
		"AWAITING_CHARGEBACK_REVERSAL", "DUNNING_REQUESTED", "DUNNING_RECEIVED", "AWAITING_RISK_ANALYSIS", "AUTHORIZED"}
	for _, s := range enum {
		f.Add(s, "100.00", "", false)
	}
	f.Add("RECEIVED", "100", "30.5", false)
	f.Add("received", "1.10", "0.001", false)
	f.Add("PENDING", "0.005", "", true)
	f.Add("", "-1", "1", false)
	c, err := NewStatusClient(StatusConfig{APIKey: "k", Options: rest.Options{Now: func() time.Time { return fetchedAt }}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, status, value, refundDone string, deleted bool) {
		st, detail := statusOf(status)
		if st.Valid() != slices.Contains(enum, status) || (!st.Valid() && (string(st) != "asaas:"+status || detail != "")) {
			t.Fatalf("statusOf(%q) = %q, %q", status, st, detail)
		}
		pay := payment{ID: "pay_1", Status: status, Value: json.Number(value), Deleted: deleted}
		if refundDone != "" {
			pay.Refunds = []refund{{Status: "DONE", Value: json.Number(refundDone)}}
		}
		obs, err := c.observe("asaas: fetch payment", pay)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("observe error %v is not KindInvalid", err)
			}
			return
		}
		again, _ := c.observe("asaas: fetch payment", pay)
		if *obs != *again || !strings.HasPrefix(obs.ProviderEventID, "obs_") {
			t.Fatalf("observation not deterministic: %+v, %+v", obs, again)
		}
		if obs.ProviderStatus != status || obs.Amount < 0 || obs.AmountRefunded < 0 || obs.AmountCaptured != captured(obs) {
			t.Fatalf("observation %+v", obs)
		}
		if deleted && obs.Status != domain.StatusCancelled {
			t.Fatalf("deleted payment observed as %s", obs.Status)
		}
	})
}

// checkEvent asserts what every mapped event must satisfy to be stored.
func checkEvent(t *testing.T, n domain.Notification, ev domain.Event) {
	t.Helper()
	m := ev.EventMeta()
	_, isFee := ev.(*domain.FeeAssessed)
	if m.Provider != "asaas" || m.ProviderEventID != n.ProviderEventID || m.ProviderEventType != n.ProviderEventType ||
		(m.SubKey != "") != isFee || (isFee && m.SubKey != "fee") {
		t.Fatalf("meta %+v does not match notification %+v", m, n)
	}
	if err := checkID("payment id", m.ProviderPaymentID); err != nil {
		t.Fatalf("payment id %q: %v", m.ProviderPaymentID, err)
	}
	if m.OccurredAt.Unix() <= 0 || m.OccurredAt.Location() != time.UTC {
		t.Fatalf("OccurredAt %v", m.OccurredAt)
	}
	if _, err := json.Marshal(ev); err != nil {
		t.Fatalf("event does not marshal: %v", err)
	}
	switch e := ev.(type) {
	case *domain.PaymentNotified:
		if _, lifecycle := lifecycleOf(m.ProviderEventType); lifecycle || e.Action != m.ProviderEventType {
			t.Fatalf("notified %+v for a lifecycle event", e)
		}
	case *domain.PaymentStatusObserved:
		if _, lifecycle := lifecycleOf(m.ProviderEventType); !lifecycle {
			t.Fatalf("observed %+v for an informational event", e)
		}
		if !e.Status.Valid() && !strings.HasPrefix(string(e.Status), unknownStatusPrefix) {
			t.Fatalf("status %q", e.Status)
		}
		if e.Currency != "BRL" || e.Amount < 0 || e.AmountRefunded < 0 || e.ProviderStatus == "" || e.AmountCaptured != captured(e) {
			t.Fatalf("observed %+v", e)
		}
	case *domain.FeeAssessed:
		if e.Currency != "BRL" || e.Amount < 0 || e.Source != "netValue" {
			t.Fatalf("fee %+v", e)
		}
	default:
		t.Fatalf("unexpected event type %T", ev)
	}
}

// checkFee asserts that a delivery's fee follows its main event and is
// about the same payment at the same time.
func checkFee(t *testing.T, main, fee domain.Event) {
	t.Helper()
	if _, ok := fee.(*domain.FeeAssessed); !ok {
		t.Fatalf("second event is %T, want the fee", fee)
	}
	m, f := main.EventMeta(), fee.EventMeta()
	if f.ProviderPaymentID != m.ProviderPaymentID || !f.OccurredAt.Equal(m.OccurredAt) || f.Key() == m.Key() {
		t.Fatalf("fee meta %+v does not go with %+v", f, m)
	}
}

// FuzzFee checks value − netValue: exact, never negative, never from an
// inexact decimal, and absent when either side is.
func FuzzFee(f *testing.F) {
	for _, seed := range [][2]string{{"100", "94.51"}, {"100.00", "100.00"}, {"100", "100.01"}, {"1.00", "-0.99"},
		{"100", "94.515"}, {"100", ""}, {"", "1"}, {"92233720368547758.07", "-0.01"}, {"5", "4.5e1"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, value, net string) {
		fee, ok := feeAmount(payment{Value: json.Number(value), NetValue: json.Number(net)})
		if !ok {
			if fee != 0 {
				t.Fatalf("feeAmount(%q, %q) = %d without a fee", value, net, fee)
			}
			return
		}
		v, verr := domain.ParseMinorUnits(value, brl)
		n, nerr := domain.ParseMinorUnits(net, brl)
		if verr != nil || nerr != nil || fee < 0 || v-n != fee || n > v {
			t.Fatalf("feeAmount(%q, %q) = %d; value %d (%v), net %d (%v)", value, net, fee, v, verr, n, nerr)
		}
	})
}

// captured is what an observation's AmountCaptured must be: its value once
// money moved, else nothing.
func captured(obs *domain.PaymentStatusObserved) int64 {
	if moneyMoved(obs.Status) {
		return obs.Amount
	}
	return 0
}
