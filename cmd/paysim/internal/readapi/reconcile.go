package readapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
)

// Check is one row of the ledger's reconciliation log.
type Check struct {
	Provider          string `json:"provider"`
	ProviderPaymentID string `json:"provider_payment_id"`
	StatusBefore      string `json:"status_before"`
	StatusAfter       string `json:"status_after"`
	Outcome           string `json:"outcome"`
	Cause             string `json:"cause"`
}

// Key is the payment's "provider/id", as truth.Payment.Key spells it.
func (c Check) Key() string { return c.Provider + "/" + c.ProviderPaymentID }

// Checks reads every page of GET /v1/reconciliation/log with query q.
func (c *Client) Checks(ctx context.Context, q url.Values) ([]Check, error) {
	var out []Check
	q.Set("limit", "500")
	for {
		raw, err := c.get(ctx, "/v1/reconciliation/log?"+q.Encode(), 16<<20)
		if err != nil {
			return nil, fmt.Errorf("reconciliation log: %w", err)
		}
		var page struct {
			Checks     []Check `json:"checks"`
			NextCursor string  `json:"next_cursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("reconciliation log: answer is not JSON: %w", err)
		}
		out = append(out, page.Checks...)
		if page.NextCursor == "" {
			return out, nil
		}
		q.Set("cursor", page.NextCursor)
	}
}
