package pagarme

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
)

// FuzzChargeStatus fuzzes the status mapper, directly and through Parse
// (charge.* and order.* deliveries of the same charge), against rules
// stated apart from the code: the charge's own status, when it is one
// Pagar.me documents, decides whatever the event type says; each such
// status maps as the spec suggests; Parse maps what it decodes exactly as
// the mapper does.
func FuzzChargeStatus(f *testing.F) {
	types := []string{"charge.created", "charge.pending", "charge.paid", "charge.underpaid", "charge.overpaid",
		"charge.payment_failed", "charge.refunded", "charge.partial_canceled", "charge.chargedback",
		"charge.antifraud_reproved", "charge.antifraud_manual", "charge.updated", "order.paid", "order.canceled", ""}
	statuses := []string{"pending", "processing", "paid", "underpaid", "overpaid", "canceled", "failed", "chargedback", "", "mystery"}
	for i, typ := range types {
		f.Add(typ, statuses[i%len(statuses)], "captured", int64(1000), int64(1000), int64(i%3)*500, i%2 == 0)
	}
	f.Add("charge.pending", "pending", "authorized_pending_capture", int64(1), int64(0), int64(0), false)
	f.Add("charge.updated", "", "waitingCapture", int64(0), int64(0), int64(0), true)
	f.Add("charge.paid", "PAID", "", int64(-1), int64(5), int64(9), true)
	f.Fuzz(func(t *testing.T, typ, status, tx string, amount, paid, canceled int64, hasPaid bool) {
		if amount >= 0 && paid >= 0 && canceled >= 0 {
			checkMapper(t, chargeFacts{typ: typ, status: status, txStatus: tx, amount: amount, paid: paid, canceled: canceled})
		}
		checkParsedCharge(t, typ, status, tx, amount, paid, canceled, hasPaid)
	})
}

// checkMapper states the mapping rules for documented charge statuses.
func checkMapper(t *testing.T, f chargeFacts) {
	t.Helper()
	got := chargeStatus(f)
	if got != "" && !got.Valid() {
		t.Fatalf("chargeStatus(%+v) = %q", f, got)
	}
	var want domain.Status
	switch strings.ToLower(f.status) {
	case "chargedback":
		want = domain.StatusChargeback
	case "failed":
		want = domain.StatusFailed
	case "pending", "processing", "waiting_payment", "waitingpayment":
		want = domain.StatusAwaitingConfirmation
		if tx := strings.ReplaceAll(strings.ToLower(f.txStatus), "_", ""); tx == "authorizedpendingcapture" || tx == "waitingcapture" {
			want = domain.StatusAuthorized
		}
	case "paid", "overpaid", "underpaid":
		switch {
		case f.canceled == 0:
			want = domain.StatusConfirmed
		case f.canceled >= f.paid:
			want = domain.StatusRefunded
		default:
			want = domain.StatusPartiallyRefunded
		}
	case "canceled":
		switch {
		case f.paid == 0:
			want = domain.StatusCancelled
		case f.canceled > 0 && f.canceled < f.paid:
			want = domain.StatusPartiallyRefunded
		default:
			want = domain.StatusRefunded
		}
	default:
		return // the type fills in; TestChargeStatus covers it
	}
	if got != want {
		t.Fatalf("chargeStatus(%+v) = %q, want %q", f, got, want)
	}
	untyped := f
	untyped.typ = ""
	if again := chargeStatus(untyped); again != got {
		t.Fatalf("status %q: type %q changed the mapping from %q to %q", f.status, f.typ, again, got)
	}
}

// checkParsedCharge delivers the charge as charge.* and inside an order.*
// and checks Parse against the mapper.
func checkParsedCharge(t *testing.T, typ, status, tx string, amount, paid, canceled int64, hasPaid bool) {
	t.Helper()
	ch := map[string]any{"id": "ch_1", "amount": amount, "status": status, "canceled_amount": canceled,
		"last_transaction": map[string]any{"status": tx}}
	if hasPaid {
		ch["paid_amount"] = paid
	}
	chargeType := typ
	if !strings.HasPrefix(typ, "charge.") || checkID("type", typ) != nil {
		chargeType = "charge.updated"
	}
	p := newProvider(t, Config{Secrets: []string{vectorSecret}})
	valid := amount >= 0 && (!hasPaid || paid >= 0) && canceled >= 0 &&
		checkStatus("", status) == nil && checkStatus("", tx) == nil
	var statuses []domain.Status
	for _, d := range []struct {
		typ  string
		data any
	}{{chargeType, ch}, {"order.paid", map[string]any{"id": "or_1", "status": "paid", "charges": []any{ch}}}} {
		body, err := json.Marshal(map[string]any{"id": "hook_1", "type": d.typ, "created_at": "2026-01-15T12:00:00Z", "data": d.data})
		if err != nil {
			t.Fatal(err)
		}
		n, err := p.Parse(t.Context(), nil, nil, body)
		if !valid {
			if err == nil || domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("Parse(%s) = %+v, %v; want invalid", body, n, err)
			}
			return
		}
		if err != nil || len(n.Events) != 1 {
			t.Fatalf("Parse(%s) = %+v, %v; want one event", body, n, err)
		}
		checkEvent(t, n, n.Events[0])
		ev := n.Events[0].(*domain.PaymentStatusObserved)
		c := charge{Status: status, Amount: &amount, LastTransaction: transaction{Status: tx}}
		if hasPaid {
			c.PaidAmount = &paid
		}
		want := chargeFacts{typ: d.typ, status: status, txStatus: tx, amount: amount, paid: paidAmount(c, d.typ), canceled: canceled}
		if ev.Status != chargeStatus(want) || ev.AmountCaptured != want.paid || ev.AmountRefunded != min(canceled, want.paid) || ev.Amount != amount ||
			ev.ProviderStatus != status || ev.ProviderStatusDetail != statusDetail(want, ev.Status) {
			t.Fatalf("Parse(%s) = %+v, want the mapping of %+v", body, ev, want)
		}
		if hasPaid && ev.AmountCaptured != paid {
			t.Fatalf("paid_amount %d captured as %d", paid, ev.AmountCaptured)
		}
		statuses = append(statuses, ev.Status)
	}
	if _, known := map[string]bool{"pending": true, "processing": true, "paid": true, "underpaid": true, "overpaid": true,
		"canceled": true, "failed": true, "chargedback": true}[strings.ToLower(status)]; known && hasPaid && statuses[0] != statuses[1] {
		t.Fatalf("status %q: charge delivery %q, order delivery %q", status, statuses[0], statuses[1])
	}
}
