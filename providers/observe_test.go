package providers_test

import (
	"testing"

	"github.com/payledger/payledger/providers"
)

func TestObservationID(t *testing.T) {
	a := providers.ObservationID("123", "approved", "accredited", "0", "2026-01-02T03:04:05Z")
	if a != providers.ObservationID("123", "approved", "accredited", "0", "2026-01-02T03:04:05Z") {
		t.Error("same observation, different IDs")
	}
	if a == providers.ObservationID("123", "approved", "partially_refunded", "500", "2026-01-02T03:04:06Z") {
		t.Error("different observations, same ID")
	}
	if providers.ObservationID("a", "bc") == providers.ObservationID("ab", "c") {
		t.Error("parts are not delimited")
	}
	if providers.ObservationID("a\x1f", "b") == providers.ObservationID("a", "\x1fb") {
		t.Error("separator inside a part collides")
	}
	if len(a) != len("obs_")+32 {
		t.Errorf("ID %q has an unexpected length", a)
	}
}
