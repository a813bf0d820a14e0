package domain_test

import (
	"slices"
	"testing"

	"github.com/payledger/payledger/domain"
)

func observed(id string, sec int, st domain.Status, captured, refunded int64) domain.Event {
	return &domain.PaymentStatusObserved{Meta: meta(id, sec), Status: st, ProviderStatus: string(st),
		Amount: 2000, AmountCaptured: captured, AmountRefunded: refunded, Currency: "USD"}
}

func notified(id string, sec int) domain.Event {
	return &domain.PaymentNotified{Meta: meta(id, sec), Action: "payment.updated"}
}

func TestObservedAndNotified(t *testing.T) {
	tests := []struct {
		name        string
		given       []domain.Event
		want        domain.Status
		wantRefund  int64
		wantReasons []string
	}{
		{name: "a notification alone is pending", given: []domain.Event{notified("n1", 0)}, want: domain.StatusPending},
		{name: "a notification changes no status", given: []domain.Event{observed("o1", 1, domain.StatusConfirmed, 2000, 0), notified("n1", 5)}, want: domain.StatusConfirmed},
		{name: "the latest snapshot wins", given: []domain.Event{observed("o2", 9, domain.StatusPartiallyRefunded, 2000, 500), observed("o1", 1, domain.StatusConfirmed, 2000, 0)},
			want: domain.StatusPartiallyRefunded, wantRefund: 500},
		{name: "a snapshot at the same instant as a fact comes after it", given: []domain.Event{observed("o1", 3, domain.StatusConfirmed, 2000, 0), failed("f1", 3)},
			want: domain.StatusConfirmed},
		{name: "disputed then back", given: []domain.Event{observed("o1", 1, domain.StatusConfirmed, 2000, 0), observed("o2", 2, domain.StatusDisputed, 2000, 0), observed("o3", 3, domain.StatusConfirmed, 2000, 0)},
			want: domain.StatusConfirmed},
		{name: "chargeback", given: []domain.Event{observed("o1", 1, domain.StatusConfirmed, 2000, 0), observed("o2", 2, domain.StatusChargeback, 2000, 0)},
			want: domain.StatusChargeback},
		{name: "an unknown status is flagged", given: []domain.Event{observed("o1", 1, "settling", 0, 0)},
			want: domain.StatusPending, wantReasons: []string{domain.ReviewUnknownStatus}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := domain.Fold(tt.given...).State()
			if s.Status != tt.want || s.AmountRefunded != tt.wantRefund || !slices.Equal(s.ReviewReasons, tt.wantReasons) {
				t.Errorf("state = %s refunded %d reasons %v; want %s, %d, %v", s.Status, s.AmountRefunded, s.ReviewReasons, tt.want, tt.wantRefund, tt.wantReasons)
			}
		})
	}
}

func TestParseMinorUnits(t *testing.T) {
	tests := []struct {
		in      string
		cur     domain.Currency
		want    int64
		wantErr bool
	}{
		{"123.45", "BRL", 12345, false},
		{"0.1", "BRL", 10, false},
		{"10", "BRL", 1000, false},
		{"10.500", "BRL", 1050, false},
		{"0.07", "USD", 7, false},
		{"1500", "CLP", 1500, false},
		{"1.234", "KWD", 1234, false},
		{"-5.5", "BRL", -550, false},
		{"92233720368547758.07", "BRL", 9223372036854775807, false},
		{"10.505", "BRL", 0, true},
		{"1.5", "CLP", 0, true},
		{"92233720368547758.08", "BRL", 0, true},
		{"1e3", "BRL", 0, true},
		{"", "BRL", 0, true},
		{".5", "BRL", 0, true},
		{"5.", "BRL", 0, true},
		{"1.2.3", "BRL", 0, true},
		{"+1", "BRL", 0, true},
		{" 1", "BRL", 0, true},
		{"1,50", "BRL", 0, true},
	}
	for _, tt := range tests {
		got, err := domain.ParseMinorUnits(tt.in, tt.cur)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseMinorUnits(%q, %s) = %d, %v; want %d, err %v", tt.in, tt.cur, got, err, tt.want, tt.wantErr)
		}
		if err != nil && domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("ParseMinorUnits(%q): kind %v, want invalid", tt.in, domain.KindOf(err))
		}
	}
}

func FuzzParseMinorUnits(f *testing.F) {
	for _, s := range []string{"123.45", "0.1", "10.500", "-5.5", "92233720368547758.08", "1e3", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := domain.ParseMinorUnits(s, "BRL")
		if err != nil {
			return
		}
		// Exactness: the value printed back with two decimals parses to itself.
		sign, abs := "", v
		if v < 0 {
			sign, abs = "-", -v
		}
		back := sign + itoa(abs/100) + "." + pad2(abs%100)
		if v2, err := domain.ParseMinorUnits(back, "BRL"); err != nil || v2 != v {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, v, back, v2, err)
		}
	})
}

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

func pad2(v int64) string { return string([]byte{byte('0' + v/10), byte('0' + v%10)}) }

// TestSameInstantSnapshotsOrderByStage: providers stamp whole seconds, so two
// snapshots can share one; the later lifecycle stage is the current state,
// whatever their (random) event IDs.
func TestSameInstantSnapshotsOrderByStage(t *testing.T) {
	for _, ids := range [][2]string{{"evt_a", "evt_z"}, {"evt_z", "evt_a"}} {
		inProgress := observed(ids[0], 7, domain.StatusConfirmed, 2000, 0)
		done := observed(ids[1], 7, domain.StatusRefunded, 2000, 2000)
		if s := domain.Fold(done, inProgress).State(); s.Status != domain.StatusRefunded {
			t.Errorf("ids %v: status = %s, want refunded", ids, s.Status)
		}
	}
}
