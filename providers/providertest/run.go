package providertest

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
)

// Run checks p against the provider contract with v. p must be configured
// with v.Secrets (and whatever else its vectors need).
func Run(t *testing.T, p Provider, v Vectors) {
	t.Helper()
	checkCoverage(t, v)
	t.Run("accepted", func(t *testing.T) {
		for _, a := range v.Accepted {
			t.Run(a.Name, func(t *testing.T) { testAccepted(t, p, a) })
		}
	})
	t.Run("ignored", func(t *testing.T) {
		for _, d := range v.Ignored {
			t.Run(d.Name, func(t *testing.T) { testIgnored(t, p, d) })
		}
	})
	t.Run("rejected", func(t *testing.T) {
		for _, r := range v.Rejected {
			t.Run(string(r.Class)+"/"+r.Name, func(t *testing.T) { testRejected(t, p, r, v.Secrets) })
		}
	})
	t.Run("derived", func(t *testing.T) {
		for _, a := range v.Accepted {
			t.Run(a.Name, func(t *testing.T) { testDerived(t, p, derive(a.Delivery, v), v.Secrets) })
		}
	})
	t.Run("authenticity", func(t *testing.T) { testAuthenticity(t, p, v) })
}

// checkCoverage fails when a required class has neither a vector nor an
// exemption, so a provider cannot pass by leaving a part of the contract out.
func checkCoverage(t *testing.T, v Vectors) {
	t.Helper()
	if len(v.Accepted) == 0 || len(v.Ignored) == 0 {
		t.Errorf("vectors: %d accepted and %d ignored deliveries, want at least one of each", len(v.Accepted), len(v.Ignored))
	}
	if v.RejectKind == domain.KindInternal {
		t.Error("vectors: RejectKind is unset (KindInternal, a 500, is never a verdict on a delivery)")
	}
	for _, c := range requiredClasses() {
		n := 0
		for _, r := range v.Rejected {
			if r.Class == c {
				n++
			}
		}
		why, exempt := v.Exempt[c]
		switch {
		case n == 0 && (!exempt || why == ""):
			t.Errorf("vectors: no %s delivery and no reason why none can exist", c)
		case n > 0 && exempt:
			t.Errorf("vectors: %s is exempt (%s) but has %d deliveries", c, why, n)
		}
	}
}

// testAccepted verifies and parses a, twice, and checks what every event names.
func testAccepted(t *testing.T, p Provider, a Accepted) {
	if err := p.Verify(t.Context(), a.Header, a.Query, a.Body, a.Now); err != nil {
		t.Fatalf("Verify() = %v, want ok", err)
	}
	n := parseTwice(t, p, a.Delivery)
	if len(n.Events) == 0 {
		t.Fatalf("Parse() gave no events (ignored: %q), want a tracked delivery", n.IgnoredReason)
	}
	if n.IgnoredReason != "" {
		t.Errorf("IgnoredReason = %q on a delivery with events", n.IgnoredReason)
	}
	keys := map[string]bool{}
	for i, ev := range n.Events {
		m := ev.EventMeta()
		switch {
		case m.Provider != p.Name():
			t.Errorf("event %d: Provider = %q, want %q", i, m.Provider, p.Name())
		case m.ProviderPaymentID == "":
			t.Errorf("event %d names no payment", i)
		case m.ProviderEventID == "" || m.ProviderEventID != n.ProviderEventID:
			t.Errorf("event %d: ProviderEventID = %q, want the notification's %q", i, m.ProviderEventID, n.ProviderEventID)
		case m.OccurredAt.IsZero():
			t.Errorf("event %d has no OccurredAt", i)
		case keys[m.ProviderPaymentID+" "+m.Key()]:
			t.Errorf("event %d repeats key %q of payment %s", i, m.Key(), m.ProviderPaymentID)
		}
		keys[m.ProviderPaymentID+" "+m.Key()] = true
	}
	if a.Want != nil && !reflect.DeepEqual(n.Events, a.Want) {
		t.Errorf("events:\n got %#v\nwant %#v", n.Events, a.Want)
	}
}

// testIgnored: an authentic delivery of an untracked type verifies and
// parses to a reason and no events.
func testIgnored(t *testing.T, p Provider, d Delivery) {
	if err := p.Verify(t.Context(), d.Header, d.Query, d.Body, d.Now); err != nil {
		t.Fatalf("Verify() = %v, want ok", err)
	}
	n := parseTwice(t, p, d)
	if len(n.Events) != 0 || n.IgnoredReason == "" {
		t.Errorf("Parse() = %d events, reason %q; want none and a reason", len(n.Events), n.IgnoredReason)
	}
}

// parseTwice parses d, and again from a copy of its body: event IDs are
// derived from the delivery alone, so both must be equal.
func parseTwice(t *testing.T, p Provider, d Delivery) domain.Notification {
	t.Helper()
	n, err := p.Parse(t.Context(), d.Header, d.Query, d.Body)
	if err != nil {
		t.Fatalf("Parse() = %v", err)
	}
	again, err := p.Parse(t.Context(), d.Header.Clone(), d.Query, append([]byte(nil), d.Body...))
	if err != nil || !reflect.DeepEqual(n, again) {
		t.Fatalf("Parse() is not stable:\n first %#v\nsecond %#v (%v)", n, again, err)
	}
	if n.Provider != p.Name() || n.ProviderEventID == "" {
		t.Errorf("notification: provider %q, event ID %q; want %q and an ID", n.Provider, n.ProviderEventID, p.Name())
	}
	return n
}

// testDerived checks derived rejections, stopping after a few failures: a
// provider that accepts one flipped byte usually accepts them all.
func testDerived(t *testing.T, p Provider, rs []Rejected, secrets []string) {
	failures := 0
	for i, r := range rs {
		if !testRejected(t, p, r, secrets) {
			failures++
		}
		if failures == 3 && i < len(rs)-1 {
			t.Errorf("stopping after 3 failures; %d derived rejections not checked", len(rs)-1-i)
			return
		}
	}
}

// testRejected: Verify refuses r with its kind and cause, and quotes no
// secret. It reports whether all of that held.
func testRejected(t *testing.T, p Provider, r Rejected, secrets []string) bool {
	t.Helper()
	err := p.Verify(t.Context(), r.Header, r.Query, r.Body, r.Now)
	if err == nil {
		t.Errorf("%s %s: Verify() = nil, want an error of kind %v", r.Class, r.Name, r.Kind)
		return false
	}
	ok := true
	if k := domain.KindOf(err); k != r.Kind {
		t.Errorf("%s %s: Verify() = %v (kind %v), want kind %v", r.Class, r.Name, err, k, r.Kind)
		ok = false
	}
	if r.Err != nil && !errors.Is(err, r.Err) {
		t.Errorf("%s %s: Verify() = %v, want it to wrap %v", r.Class, r.Name, err, r.Err)
		ok = false
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("%s %s: error %q quotes a secret", r.Class, r.Name, err)
			ok = false
		}
	}
	return ok
}
