package readapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// Event is the part of one stored event of GET …/events that says where
// it came from and what the ledger concluded once it was known.
type Event struct {
	EventID         string    `json:"event_id"`
	ProviderEventID string    `json:"provider_event_id"`
	Type            string    `json:"type"`
	RecordedAt      time.Time `json:"recorded_at"`
	Revision        uint64    `json:"revision"`
	Metadata        struct {
		ReceivedAt        time.Time `json:"received_at"`
		ProviderEventType string    `json:"provider_event_type"` // "api.payment", "api.payment_intent": an observation
		SignatureHeader   string    `json:"signature_header"`    // empty for anything not delivered as a webhook
		Source            string    `json:"source"`              // webhook, api, backfill ("" before the ledger recorded it)
	} `json:"metadata"`
	StateAfter Payment `json:"state_after"`
}

// Events reads the payment's stream (GET …/events) in stream order.
func (c *Client) Events(ctx context.Context, p *truth.Payment) ([]Event, error) {
	raw, err := c.rawEvents(ctx, p)
	if err != nil {
		return nil, err
	}
	var body struct {
		Events []Event `json:"events"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("events of %s: answer is not JSON: %w", p.Key(), err)
	}
	return body.Events, nil
}

// rawEvents GETs the payment's events.
func (c *Client) rawEvents(ctx context.Context, p *truth.Payment) ([]byte, error) {
	u := c.Ledger + "/v1/payments/" + url.PathEscape(p.Provider) + "/" + url.PathEscape(p.ID) + "/events"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", p.Key(), err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", p.Key(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", p.Key(), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("events of %s: HTTP %d", p.Key(), resp.StatusCode)
	}
	return raw, nil
}
