package pagarme

import (
	"testing"

	"github.com/payledger/payledger/domain"
)

// TestChargeStatus is the mapping table (providers.md §4.3's suggested
// mapping), including the cases where type and status disagree.
func TestChargeStatus(t *testing.T) {
	tests := []struct {
		name   string
		f      chargeFacts
		want   domain.Status
		detail string
	}{
		// The charge's status decides.
		{name: "created, pending", f: chargeFacts{typ: "charge.created", status: "pending", amount: 100}, want: domain.StatusAwaitingConfirmation},
		{name: "processing", f: chargeFacts{typ: "charge.processing", status: "processing", amount: 100}, want: domain.StatusAwaitingConfirmation},
		{name: "antifraud pending", f: chargeFacts{typ: "charge.antifraud_pending", status: "pending", amount: 100}, want: domain.StatusAwaitingConfirmation},
		{name: "authorized pending capture", f: chargeFacts{typ: "charge.pending", status: "pending", txStatus: "authorized_pending_capture", amount: 100},
			want: domain.StatusAuthorized, detail: "authorized_pending_capture"},
		{name: "waiting capture, camel case", f: chargeFacts{status: "processing", txStatus: "waitingCapture", amount: 100},
			want: domain.StatusAuthorized, detail: "waitingCapture"},
		{name: "paid", f: chargeFacts{typ: "charge.paid", status: "paid", txStatus: "captured", amount: 100, paid: 100},
			want: domain.StatusConfirmed, detail: "captured"},
		{name: "underpaid flagged", f: chargeFacts{typ: "charge.underpaid", status: "underpaid", amount: 100, paid: 90},
			want: domain.StatusConfirmed, detail: "underpaid"},
		{name: "overpaid flagged", f: chargeFacts{typ: "charge.overpaid", status: "overpaid", amount: 100, paid: 110},
			want: domain.StatusConfirmed, detail: "overpaid"},
		{name: "paid less than the amount is flagged underpaid", f: chargeFacts{typ: "charge.paid", status: "paid", txStatus: "captured", amount: 100, paid: 90},
			want: domain.StatusConfirmed, detail: "underpaid"},
		{name: "payment failed", f: chargeFacts{typ: "charge.payment_failed", status: "failed", txStatus: "not_authorized", amount: 100},
			want: domain.StatusFailed, detail: "not_authorized"},
		{name: "antifraud reproved", f: chargeFacts{typ: "charge.antifraud_reproved", status: "failed", amount: 100}, want: domain.StatusFailed},
		{name: "canceled before payment", f: chargeFacts{typ: "charge.canceled", status: "canceled", amount: 100, canceled: 100}, want: domain.StatusCancelled},
		{name: "canceled without amounts", f: chargeFacts{status: "canceled", amount: 100}, want: domain.StatusCancelled},
		{name: "refunded reads canceled", f: chargeFacts{typ: "charge.refunded", status: "canceled", amount: 100, paid: 100, canceled: 100}, want: domain.StatusRefunded},
		{name: "canceled after payment without canceled_amount", f: chargeFacts{status: "canceled", amount: 100, paid: 100}, want: domain.StatusRefunded},
		{name: "canceled, less returned than paid", f: chargeFacts{status: "canceled", amount: 100, paid: 100, canceled: 40}, want: domain.StatusPartiallyRefunded},
		{name: "underpaid then fully refunded", f: chargeFacts{status: "canceled", amount: 100, paid: 90, canceled: 90}, want: domain.StatusRefunded},
		{name: "partial cancel", f: chargeFacts{typ: "charge.partial_canceled", status: "paid", amount: 100, paid: 100, canceled: 30}, want: domain.StatusPartiallyRefunded},
		{name: "paid status but everything returned", f: chargeFacts{typ: "charge.refunded", status: "paid", amount: 100, paid: 100, canceled: 100}, want: domain.StatusRefunded},
		{name: "chargedback", f: chargeFacts{typ: "charge.chargedback", status: "chargedback", amount: 100, paid: 100}, want: domain.StatusChargeback},
		{name: "status case-insensitive", f: chargeFacts{status: "PAID", amount: 100, paid: 100}, want: domain.StatusConfirmed},

		// Type and status disagree: the status wins.
		{name: "late charge.paid carrying a refunded charge", f: chargeFacts{typ: "charge.paid", status: "canceled", amount: 100, paid: 100, canceled: 100},
			want: domain.StatusRefunded},
		{name: "charge.payment_failed carrying a paid charge (retried)", f: chargeFacts{typ: "charge.payment_failed", status: "paid", amount: 100, paid: 100},
			want: domain.StatusConfirmed},
		{name: "charge.refunded carrying a still-paid charge", f: chargeFacts{typ: "charge.refunded", status: "paid", amount: 100, paid: 100},
			want: domain.StatusConfirmed},
		{name: "charge.chargedback carrying a paid charge", f: chargeFacts{typ: "charge.chargedback", status: "paid", amount: 100, paid: 100},
			want: domain.StatusConfirmed},
		{name: "transaction chargedback under an unknown status", f: chargeFacts{status: "mystery", txStatus: "chargedback", amount: 100, paid: 100},
			want: domain.StatusChargeback, detail: "chargedback"},

		// No status: the type fills in.
		{name: "no status, charge.paid", f: chargeFacts{typ: "charge.paid", amount: 100, paid: 100}, want: domain.StatusConfirmed},
		{name: "no status, charge.underpaid flagged", f: chargeFacts{typ: "charge.underpaid", amount: 100, paid: 100}, want: domain.StatusConfirmed, detail: "underpaid"},
		{name: "no status, charge.refunded", f: chargeFacts{typ: "charge.refunded", amount: 100, paid: 100}, want: domain.StatusRefunded},
		{name: "no status, charge.refunded with a partial amount", f: chargeFacts{typ: "charge.refunded", amount: 100, paid: 100, canceled: 10},
			want: domain.StatusPartiallyRefunded},
		{name: "no status, charge.partial_canceled", f: chargeFacts{typ: "charge.partial_canceled", amount: 100, paid: 100}, want: domain.StatusPartiallyRefunded},
		{name: "no status, charge.chargedback", f: chargeFacts{typ: "charge.chargedback", amount: 100, paid: 100}, want: domain.StatusChargeback},
		{name: "no status, charge.payment_failed", f: chargeFacts{typ: "charge.payment_failed", amount: 100}, want: domain.StatusFailed},
		{name: "no status, charge.antifraud_reproved", f: chargeFacts{typ: "charge.antifraud_reproved", amount: 100}, want: domain.StatusFailed},
		{name: "no status, charge.antifraud_manual", f: chargeFacts{typ: "charge.antifraud_manual", amount: 100}, want: domain.StatusAwaitingConfirmation},
		{name: "no status, charge.created authorized", f: chargeFacts{typ: "charge.created", txStatus: "authorized_pending_capture", amount: 100},
			want: domain.StatusAuthorized, detail: "authorized_pending_capture"},
		{name: "no status, order.paid", f: chargeFacts{typ: "order.paid", amount: 100, paid: 100}, want: domain.StatusConfirmed},
		{name: "no status, order.canceled", f: chargeFacts{typ: "order.canceled", amount: 100}, want: domain.StatusCancelled},
		{name: "no status, order.payment_failed", f: chargeFacts{typ: "order.payment_failed", amount: 100}, want: domain.StatusFailed},
		{name: "no status, order.created", f: chargeFacts{typ: "order.created", amount: 100}, want: domain.StatusPending},
		{name: "no status, charge.created, Pix issued", f: chargeFacts{typ: "charge.created", txStatus: "waiting_payment", amount: 100},
			want: domain.StatusAwaitingConfirmation, detail: "waiting_payment"},
		{name: "no status, unknown type, antifraud analyzing", f: chargeFacts{typ: "charge.updated", txStatus: "analyzing", amount: 100},
			want: domain.StatusAwaitingConfirmation, detail: "analyzing"},
		{name: "waiting_payment charge", f: chargeFacts{typ: "charge.updated", status: "waiting_payment", amount: 100},
			want: domain.StatusAwaitingConfirmation},
		{name: "no status, unknown type, authorized transaction", f: chargeFacts{typ: "charge.updated", txStatus: "authorized_pending_capture", amount: 100},
			want: domain.StatusAuthorized, detail: "authorized_pending_capture"},
		{name: "nothing known: review", f: chargeFacts{typ: "charge.updated", status: "mystery", txStatus: "captured", amount: 100},
			want: "", detail: "captured"},
		{name: "API fetch, no status", f: chargeFacts{amount: 100}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chargeStatus(tt.f)
			if got != tt.want {
				t.Fatalf("chargeStatus(%+v) = %q, want %q", tt.f, got, tt.want)
			}
			if d := statusDetail(tt.f, got); d != tt.detail {
				t.Errorf("statusDetail = %q, want %q", d, tt.detail)
			}
		})
	}
}
