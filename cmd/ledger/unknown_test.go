package main

import (
	"slices"
	"testing"
)

func TestUnknownSettings(t *testing.T) {
	got := unknownSettings([]string{
		"LEDGER_STRIPE_WEBHOOK_SECRET=whsec_x", // the plural is the setting
		"LEDGER_DATABASE_URL=postgres://x",     // known
		"LEDGER_FROBNICATE=1",                  // nothing near
		"PATH=/usr/bin",                        // not ours
		"LEDGER_REVEIW_AFTER=1h",               // transposed letters
	})
	want := []string{
		"LEDGER_FROBNICATE is not a setting ledger reads",
		"LEDGER_REVEIW_AFTER is not a setting ledger reads (did you mean LEDGER_REVIEW_AFTER?)",
		"LEDGER_STRIPE_WEBHOOK_SECRET is not a setting ledger reads (did you mean LEDGER_STRIPE_WEBHOOK_SECRETS?)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("unknownSettings:\n%q\nwant\n%q", got, want)
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 2}} {
		if d := editDistance(tc.a, tc.b); d != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, d, tc.d)
		}
	}
}
