package deliver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// Delivery is the record of one send of a webhook: how many attempts it
// took, whether it was acknowledged, and how.
type Delivery struct {
	Attempts   int
	Acked      bool
	Outcome    string        // the ledger's "outcome" on the acknowledged attempt
	EventID    string        // the ledger's "event_id" on the acknowledged attempt (the stored event)
	Sent       time.Time     // when the acknowledged attempt was sent
	AckLatency time.Duration // of the acknowledged attempt
	Elapsed    time.Duration // from the first attempt to the acknowledgement or giving up
	LastError  string        // why the last failed attempt failed
}

// deliverer sends webhooks to the ledger with retries.
type deliverer struct {
	client *http.Client
	ledger string // base URL
	sign   Signer
	retry  Retry
	slots  chan struct{} // bounds attempts in flight (--concurrency)
	now    func() time.Time
}

// deliver sends w until the ledger acknowledges it or the retry budget is
// spent. Only ctx cancellation stops it early.
func (d *deliverer) deliver(ctx context.Context, p *truth.Payment, w *truth.Webhook) Delivery {
	var rec Delivery
	start := d.now()
	for {
		rec.Attempts++
		a, err := d.attempt(ctx, p, w)
		switch {
		case err == nil && acknowledged(p.Provider, a.code):
			rec.Acked, rec.Outcome, rec.EventID, rec.Sent, rec.AckLatency = true, a.outcome, a.eventID, a.sent, a.latency
			rec.Elapsed = d.now().Sub(start)
			return rec
		case err != nil:
			rec.LastError = err.Error()
		default:
			rec.LastError = fmt.Sprintf("HTTP %d %s", a.code, a.outcome)
		}
		wait := d.retry.backoff(rec.Attempts)
		if rec.Attempts >= d.retry.Attempts || d.now().Add(wait).Sub(start) > d.retry.Budget || ctx.Err() != nil {
			rec.Elapsed = d.now().Sub(start)
			return rec
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			rec.Elapsed = d.now().Sub(start)
			return rec
		case <-t.C:
		}
	}
}

// acknowledged reports whether the provider counts code as delivered:
// any 2xx, except Asaas, which accepts exactly 200.
func acknowledged(provider string, code int) bool {
	if provider == truth.Asaas {
		return code == http.StatusOK
	}
	return code >= 200 && code < 300
}

// EventIDHeader carries the webhook's identity, "{provider}:{event ID}",
// the key the ledger deduplicates on: `paysim floor` keys its one INSERT on
// it so that it needs to parse nothing. The ledger ignores the header.
const EventIDHeader = "Paysim-Event-Id"

// answer is what one attempt got back.
type answer struct {
	code    int
	outcome string // the ledger's outcome, or the start of the error body
	eventID string // the stored event's ID, when the ledger names it
	sent    time.Time
	latency time.Duration
}

// attempt makes one POST and returns the answer; an error means no answer
// (the latency is still set once the request was sent).
func (d *deliverer) attempt(ctx context.Context, p *truth.Payment, w *truth.Webhook) (answer, error) {
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		return answer{}, ctx.Err()
	}
	defer func() { <-d.slots }()
	ctx, cancel := context.WithTimeout(ctx, d.retry.Timeout)
	defer cancel()
	url := d.ledger + "/webhooks/" + p.Provider
	if w.Query != "" {
		url += "?" + w.Query
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(w.Body))
	if err != nil {
		return answer{}, err
	}
	h, err := d.sign.Headers(p, w, d.now())
	if err != nil {
		return answer{}, err
	}
	h.Set(EventIDHeader, p.Provider+":"+w.EventID)
	req.Header = h
	// The clock starts when the request leaves, after signing: the ack
	// latency is the receiver's, and a provider signs on its own machines.
	a := answer{sent: d.now()}
	resp, err := d.client.Do(req)
	if err != nil {
		a.latency = d.now().Sub(a.sent)
		return a, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	a.latency = d.now().Sub(a.sent)
	if err != nil {
		return a, err // a cut answer is no acknowledgement
	}
	var body struct {
		Outcome string `json:"outcome"`
		EventID string `json:"event_id"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &body)
	if body.Outcome == "" {
		body.Outcome = strings.TrimSpace(body.Error.Message)
	}
	a.code, a.outcome, a.eventID = resp.StatusCode, body.Outcome, body.EventID
	return a, nil
}
