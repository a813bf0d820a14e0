package domain_test

import (
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func TestAsOf(t *testing.T) {
	base := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	// A success that happened at 09:10 and was stored at 09:30; a refund
	// that happened at 09:20 and was stored at 09:21.
	s, r := succeeded("evt_s", 0, 2000).(*domain.PaymentSucceeded), refunded("evt_r", 0, 500).(*domain.PaymentRefunded)
	s.OccurredAt, r.OccurredAt = base.Add(10*time.Minute), base.Add(20*time.Minute)
	success := domain.Arrival{Event: s, EventID: "e1", RecordedAt: base.Add(30 * time.Minute)}
	refund := domain.Arrival{Event: r, EventID: "e2", RecordedAt: base.Add(21 * time.Minute)}
	arrivals := []domain.Arrival{refund, success}
	tests := []struct {
		name  string
		view  domain.AsOf
		folds []string
	}{
		{"effective before both", domain.AsOf{At: base, Basis: domain.BasisEffective}, nil},
		{"effective at the success", domain.AsOf{At: base.Add(10 * time.Minute), Basis: domain.BasisEffective}, []string{"e1"}},
		{"effective after both", domain.AsOf{At: base.Add(25 * time.Minute), Basis: domain.BasisEffective}, []string{"e2", "e1"}},
		{"empty basis is effective", domain.AsOf{At: base.Add(15 * time.Minute)}, []string{"e1"}},
		{"recorded once the refund was stored", domain.AsOf{At: base.Add(21 * time.Minute), Basis: domain.BasisRecorded}, []string{"e2"}},
		{"recorded once both were", domain.AsOf{At: base.Add(30 * time.Minute), Basis: domain.BasisRecorded}, []string{"e2", "e1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range tc.view.Filter(arrivals) {
				got = append(got, a.EventID)
			}
			if len(got) != len(tc.folds) || (len(got) > 0 && got[0] != tc.folds[0]) || (len(got) > 1 && got[1] != tc.folds[1]) {
				t.Errorf("folds %v, want %v", got, tc.folds)
			}
		})
	}
	v := domain.AsOf{At: base, Basis: domain.BasisRecorded}
	if !v.Holds(base.Add(time.Hour), base) || v.Holds(base, base.Add(time.Nanosecond)) {
		t.Error("recorded Holds reads the recorded time, at or before the moment")
	}
	v.Basis = domain.BasisEffective
	if !v.Holds(base, base.Add(time.Hour)) || v.Holds(base.Add(time.Nanosecond), base) {
		t.Error("effective Holds reads the effective time, at or before the moment")
	}
}
