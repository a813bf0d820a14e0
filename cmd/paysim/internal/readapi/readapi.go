package readapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/internal/backoff"
)

// Client reads from the ledger's public HTTP API.
type Client struct {
	HTTP   *http.Client
	Ledger string // base URL
	Token  string // Bearer token, role read
}

// Payment is the part of GET /v1/payments/{provider}/{id} paysim checks.
type Payment struct {
	Status         string `json:"status"`
	Amount         int64  `json:"amount"`
	AmountRefunded int64  `json:"amount_refunded"`
	Currency       string `json:"currency"`
	EventCount     int    `json:"event_count"`
}

// Answer is one read of a payment.
type Answer struct {
	Code int // 0: the request failed
	Got  Payment
	Err  string
}

// Fetch reads one payment from the read API.
func (c *Client) Fetch(ctx context.Context, p *truth.Payment) Answer {
	u := c.Ledger + "/v1/payments/" + url.PathEscape(p.Provider) + "/" + url.PathEscape(p.ID)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Answer{Err: err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Answer{Err: err.Error()}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	a := Answer{Code: resp.StatusCode}
	switch {
	case err != nil:
		a.Err = err.Error()
	case resp.StatusCode == http.StatusOK:
		if err := json.Unmarshal(raw, &a.Got); err != nil {
			a.Err = "read API answer is not JSON: " + err.Error()
		}
	default:
		a.Err = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return a
}

// errNotInStream means the events endpoint does not list the event the
// ledger acknowledged: a lost acknowledged event, or a harness bug.
var errNotInStream = errors.New("acknowledged event not in the payment's stream")

// Revision reads the payment's stream from the event store
// (GET …/events) and returns the revision of event eventID.
func (c *Client) Revision(ctx context.Context, p *truth.Payment, eventID string) (uint64, error) {
	raw, err := c.rawEvents(ctx, p)
	if err != nil {
		return 0, err
	}
	rev, err := revisionIn(raw, eventID)
	if err != nil {
		return 0, fmt.Errorf("events of %s: %w", p.Key(), err)
	}
	return rev, nil
}

// revisionIn finds eventID in an events endpoint answer.
func revisionIn(raw []byte, eventID string) (uint64, error) {
	var body struct {
		Events []struct {
			EventID  string `json:"event_id"`
			Revision uint64 `json:"revision"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return 0, fmt.Errorf("answer is not JSON: %w", err)
	}
	for _, e := range body.Events {
		if e.EventID == eventID {
			return e.Revision, nil
		}
	}
	return 0, fmt.Errorf("%w: %s", errNotInStream, eventID)
}

// WaitReady polls GET /readyz until 200 or timeout.
func (c *Client) WaitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Ledger+"/readyz", nil)
		if err != nil {
			return fmt.Errorf("paysim: ledger URL: %w", err)
		}
		resp, err := c.HTTP.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		last = err
		if time.Now().After(deadline) {
			return fmt.Errorf("paysim: ledger at %s not ready after %s: %w", c.Ledger, timeout, last)
		}
		if backoff.Sleep(ctx, 200*time.Millisecond) != nil {
			return ctx.Err()
		}
	}
}
