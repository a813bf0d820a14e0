package asaas

import (
	"reflect"
	"testing"

	"github.com/payledger/payledger/domain"
)

// TestLifecycleFolds: a boleto paid, settled and partly refunded, delivered
// in every order and with a duplicate, folds to one state, its fee (each
// delivery states value 100, netValue 94.51) included.
func TestLifecycleFolds(t *testing.T) {
	p := newProvider(t, Config{Tokens: []string{"tok"}})
	deliveries := []edits{
		{"id": "evt_a1&1", "event": "PAYMENT_CREATED", "dateCreated": "2024-06-10 09:00:00", "payment.status": "PENDING"},
		{"id": "evt_a2&2", "event": "PAYMENT_BANK_SLIP_VIEWED", "dateCreated": "2024-06-11 10:00:00", "payment.status": "PENDING"},
		{"id": "evt_a3&3", "event": "PAYMENT_CONFIRMED", "dateCreated": "2024-06-12 16:45:00", "payment.status": "CONFIRMED"},
		{"id": "evt_a4&4", "event": "PAYMENT_RECEIVED", "dateCreated": "2024-06-12 16:45:03", "payment.status": "RECEIVED"},
		{"id": "evt_a5&5", "event": "PAYMENT_PARTIALLY_REFUNDED", "dateCreated": "2024-06-13 08:00:00", "payment.status": "RECEIVED",
			"payment.refunds": refunds("DONE", "30.00", "PENDING", "10.00")},
	}
	var events []domain.Event
	var perDelivery []domain.Event // one event per delivery to permute: its first
	var rest [][]domain.Event      // and the others of that delivery (the fee)
	for _, d := range deliveries {
		n, err := p.Parse(t.Context(), nil, nil, payload(t, d))
		if err != nil {
			t.Fatalf("Parse(%v): %v", d["event"], err)
		}
		events = append(events, n.Events...)
		perDelivery = append(perDelivery, n.Events[0])
		rest = append(rest, n.Events[1:])
	}
	want := domain.Fold(events...).State()
	if want.Status != domain.StatusPartiallyRefunded || want.Amount != 10000 || want.AmountCaptured != 10000 ||
		want.AmountRefunded != 3000 || want.Currency != "BRL" || want.EventCount != 6 || len(want.ReviewReasons) != 0 ||
		want.Fee != 549 || want.FeeCurrency != "BRL" {
		t.Fatalf("folded state %+v", want)
	}
	// Every order of the deliveries, each delivery's fee arriving before
	// its status (10! orders of single events would be too many to fold).
	byFirst := map[string][]domain.Event{}
	for i, e := range perDelivery {
		byFirst[e.EventMeta().Key()] = rest[i]
	}
	permute(perDelivery, 0, func(deliveries []domain.Event) {
		var order []domain.Event
		for _, e := range deliveries {
			order = append(append(order, byFirst[e.EventMeta().Key()]...), e)
		}
		got := domain.Fold(append(order, order[0])...).State()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("order %v folds to %+v, want %+v", keys(order), got, want)
		}
	})
}

// permute calls f with every permutation of es (in place).
func permute(es []domain.Event, i int, f func([]domain.Event)) {
	if i == len(es) {
		f(es)
		return
	}
	for j := i; j < len(es); j++ {
		es[i], es[j] = es[j], es[i]
		permute(es, i+1, f)
		es[i], es[j] = es[j], es[i]
	}
}

func keys(es []domain.Event) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.EventMeta().Key()
	}
	return out
}
