package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Delivery is the record of one send of a webhook: how many attempts it
// took, whether it was acknowledged, and how.
type Delivery struct {
	Attempts   int
	Acked      bool
	Outcome    string        // the ledger's "outcome" on the acknowledged attempt
	AckLatency time.Duration // of the acknowledged attempt
	Elapsed    time.Duration // from the first attempt to the acknowledgement or giving up
	LastError  string        // why the last failed attempt failed
}

// deliverer sends webhooks to the ledger with retries.
type deliverer struct {
	client *http.Client
	ledger string // base URL
	sign   *signer
	retry  Retry
	slots  chan struct{} // bounds attempts in flight (--concurrency)
	now    func() time.Time
}

// deliver sends w until the ledger acknowledges it or the retry budget is
// spent. Only ctx cancellation stops it early.
func (d *deliverer) deliver(ctx context.Context, p *Payment, w *Webhook) Delivery {
	var rec Delivery
	start := d.now()
	for {
		rec.Attempts++
		code, outcome, lat, err := d.attempt(ctx, p, w)
		switch {
		case err == nil && acknowledged(p.Provider, code):
			rec.Acked, rec.Outcome, rec.AckLatency = true, outcome, lat
			rec.Elapsed = d.now().Sub(start)
			return rec
		case err != nil:
			rec.LastError = err.Error()
		default:
			rec.LastError = fmt.Sprintf("HTTP %d %s", code, outcome)
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
	if provider == asaasName {
		return code == http.StatusOK
	}
	return code >= 200 && code < 300
}

// attempt makes one POST; it returns the status, the ledger's outcome (or
// the start of the error body) and the attempt's latency.
func (d *deliverer) attempt(ctx context.Context, p *Payment, w *Webhook) (int, string, time.Duration, error) {
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		return 0, "", 0, ctx.Err()
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
		return 0, "", 0, err
	}
	start := d.now()
	h, err := d.sign.headers(p, w, start)
	if err != nil {
		return 0, "", 0, err
	}
	req.Header = h
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, "", d.now().Sub(start), err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	lat := d.now().Sub(start)
	if err != nil {
		return 0, "", lat, err // a cut answer is no acknowledgement
	}
	var body struct {
		Outcome string `json:"outcome"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &body)
	if body.Outcome == "" {
		body.Outcome = strings.TrimSpace(body.Error.Message)
	}
	return resp.StatusCode, body.Outcome, lat, nil
}
