package stripe

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/payledger/payledger/domain"
)

// FuzzParseEvent fuzzes the mapping through the fields Parse reads, which
// byte-level mutation of JSON rarely reaches, and checks the outcome against
// an oracle: valid fields map to the expected event, invalid ones fail,
// PaymentIntent-less charges and disputes are ignored.
func FuzzParseEvent(f *testing.F) {
	for _, typ := range []string{
		"payment_intent.created", "payment_intent.processing", "payment_intent.requires_action",
		"payment_intent.amount_capturable_updated", "payment_intent.succeeded", "payment_intent.payment_failed",
		"payment_intent.canceled", "charge.refunded", "charge.dispute.created", "charge.dispute.closed", "customer.created",
	} {
		f.Add(typ, "evt_1", int64(1700000000), "pi_1", int64(2000), int64(1500), "usd", "pi_1", "lost")
	}
	f.Add("charge.refunded", "evt_1", int64(1), "ch_1", int64(0), int64(0), "JPY", "", "")
	f.Add("charge.dispute.closed", "evt 1", int64(-1), "dp_1", int64(-1), int64(-5), "us", "pi\x00", "")
	p, err := New(Config{Secrets: []string{vectorSecret}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, typ, evtID string, created int64, objID string, amt, amt2 int64, cur, pi, status string) {
		object := map[string]any{
			"id": objID, "amount": amt, "amount_received": amt2, "amount_capturable": amt2,
			"amount_captured": amt, "amount_refunded": amt2, "currency": cur, "payment_intent": pi,
			"status": status, "reason": status, "cancellation_reason": status,
			"last_payment_error": map[string]any{"code": status, "message": status},
		}
		body, err := json.Marshal(map[string]any{"id": evtID, "object": "event", "type": typ, "created": created,
			"data": map[string]any{"object": object}})
		if err != nil {
			t.Fatal(err)
		}
		n, err := p.Parse(t.Context(), nil, nil, body)
		want := oracle(typ, evtID, created, objID, []int64{amt, amt2}, cur, pi, status)
		switch {
		case want == "error":
			if err == nil {
				t.Fatalf("Parse(%s) = %+v, want an error", body, n)
			}
			if domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("Parse(%s) = %v, want KindInvalid", body, err)
			}
			return
		case err != nil:
			t.Fatalf("Parse(%s) = %v, want %s", body, err, want)
		case want == "ignored":
			if len(n.Events) != 0 || n.IgnoredReason == "" {
				t.Fatalf("Parse(%s) = %+v, want ignored", body, n)
			}
			return
		}
		if len(n.Events) != 1 {
			t.Fatalf("Parse(%s) = %+v, want one event", body, n)
		}
		ev := n.Events[0]
		checkEvent(t, n, ev)
		if id := ev.EventMeta().ProviderPaymentID; utf8.ValidString(want) && id != want {
			t.Fatalf("payment id %q, want %q", id, want)
		}
		if _, c := eventMoney(t, ev); c != domain.Currency(strings.ToUpper(cur)) {
			t.Fatalf("currency %q from %q", c, cur)
		}
		if dc, ok := ev.(*domain.DisputeClosed); ok && (dc.Outcome == domain.DisputeLost) != (status == "lost") {
			t.Fatalf("status %q gave outcome %q", status, dc.Outcome)
		}
	})
}

// oracle says what Parse must make of the fuzzed fields: "error", "ignored",
// or the expected payment ID. It is written apart from the mapping code.
func oracle(typ, evtID string, created int64, objID string, amounts []int64, cur, pi, status string) string {
	if checkID("", evtID) != nil || checkID("", typ) != nil || created <= 0 || created > maxCreated {
		return "error"
	}
	paymentIntentTypes := map[string]bool{
		"payment_intent.created": true, "payment_intent.processing": true, "payment_intent.requires_action": true,
		"payment_intent.amount_capturable_updated": true, "payment_intent.succeeded": true,
		"payment_intent.payment_failed": true, "payment_intent.canceled": true,
	}
	payment := pi
	checked := amounts // charge.refunded and payment intents check both amounts
	switch {
	case paymentIntentTypes[typ]:
		payment = objID
	case typ == "charge.refunded", typ == "charge.dispute.created", typ == "charge.dispute.closed":
		if checkID("", objID) != nil {
			return "error"
		}
		if pi == "" {
			return "ignored"
		}
		if typ != "charge.refunded" {
			checked = amounts[:1] // a dispute has one amount
		}
	default:
		return "ignored"
	}
	_, curErr := domain.NewCurrency(cur)
	if checkID("", objID) != nil || checkID("", payment) != nil || curErr != nil ||
		slices.Min(checked) < 0 || (typ == "charge.dispute.closed" && status == "") {
		return "error"
	}
	return payment
}
