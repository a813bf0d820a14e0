package verdict

import (
	"testing"

	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
)

func TestCheckLog(t *testing.T) {
	row := func(id, outcome, cause string) readapi.Check {
		return readapi.Check{Provider: "stripe", ProviderPaymentID: id, Outcome: outcome, Cause: cause}
	}
	dropped := map[string]bool{"stripe/a": true, "stripe/b": true}
	unsent := map[string][]string{"stripe/a": {"evt_a2"}, "stripe/b": {"evt_b2"}, "stripe/lost": {"evt_l1"}}
	reconciled := map[string]Route{"stripe/a": ByReconciliation, "stripe/b": ByReconciliation, "stripe/lost": ByBackfill}
	tests := []struct {
		name                          string
		rows                          []readapi.Check
		routes                        map[string]Route
		ok                            bool
		missing, repeated, unexpected int
	}{
		{"one correction each", []readapi.Check{row("a", "corrected", "missing_webhook"), row("b", "corrected", "missing_webhook"),
			row("c", "unchanged", ""), row("lost", "corrected", "missing_webhook")}, reconciled, true, 0, 0, 0},
		{"a dropped payment never corrected", []readapi.Check{row("a", "corrected", "missing_webhook")}, reconciled, false, 1, 0, 0},
		{"converged by its fetch needs none", []readapi.Check{row("a", "corrected", "missing_webhook")},
			map[string]Route{"stripe/a": ByReconciliation, "stripe/b": ByWebhook}, true, 0, 0, 0},
		{"corrected twice", []readapi.Check{row("a", "corrected", "missing_webhook"), row("a", "corrected", "missing_webhook"),
			row("b", "corrected", "missing_webhook")}, reconciled, false, 0, 1, 0},
		{"a payment nothing was withheld from", []readapi.Check{row("a", "corrected", "missing_webhook"), row("b", "corrected", "missing_webhook"),
			row("c", "corrected", "diverged")}, reconciled, false, 0, 0, 1},
		{"a final-looking payment diverged", []readapi.Check{row("a", "corrected", "diverged"), row("b", "corrected", "missing_webhook")}, reconciled, true, 0, 0, 0},
		{"unknown cause", []readapi.Check{row("a", "corrected", "mystery"), row("b", "corrected", "missing_webhook")}, reconciled, false, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CheckLog(tt.rows, dropped, unsent, tt.routes)
			if c.OK() != tt.ok || len(c.Missing) != tt.missing || len(c.Repeated) != tt.repeated || len(c.Unexpected) != tt.unexpected {
				t.Fatalf("CheckLog = %+v", c)
			}
		})
	}
}
