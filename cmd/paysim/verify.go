package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// readModel is the part of GET /v1/payments/{provider}/{id} paysim checks.
type readModel struct {
	Status         string `json:"status"`
	Amount         int64  `json:"amount"`
	AmountRefunded int64  `json:"amount_refunded"`
	Currency       string `json:"currency"`
	EventCount     int    `json:"event_count"`
}

// check is the last reading of one payment.
type check struct {
	code int // 0: the request failed
	got  readModel
	err  string
	diff string // "" when the payment matches its truth
}

// diff compares a reading with the payment's final truth. The event count
// is exact where every webhook is one stored event; for Mercado Pago it is
// at least the notifications plus one status observation.
func diff(p *Payment, got readModel) string {
	want := p.Final()
	var d string
	add := func(field string, w, g any) {
		if fmt.Sprint(w) != fmt.Sprint(g) {
			d += fmt.Sprintf(" %s: want %v, got %v;", field, w, g)
		}
	}
	add("status", want.Status, got.Status)
	add("amount", want.Amount, got.Amount)
	add("amount_refunded", want.Refunded, got.AmountRefunded)
	add("currency", want.Currency, got.Currency)
	switch {
	case p.Events > 0:
		add("event_count", p.Events, got.EventCount)
	case got.EventCount < len(p.Steps)+1:
		d += fmt.Sprintf(" event_count: want at least %d, got %d;", len(p.Steps)+1, got.EventCount)
	}
	return d
}

// reader reads payments from the ledger's read API.
type reader struct {
	client *http.Client
	ledger string
	token  string
}

// read fetches one payment and compares it with its truth.
func (r *reader) read(ctx context.Context, p *Payment) check {
	c := r.fetch(ctx, p)
	switch {
	case c.code == http.StatusOK && c.err != "":
		c.diff = c.err // an unreadable answer is not a match
	case c.code == http.StatusOK:
		c.diff = diff(p, c.got)
	}
	return c
}

// fetch reads one payment from the read API.
func (r *reader) fetch(ctx context.Context, p *Payment) check {
	u := r.ledger + "/v1/payments/" + url.PathEscape(p.Provider) + "/" + url.PathEscape(p.ID)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return check{err: err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := r.client.Do(req)
	if err != nil {
		return check{err: err.Error()}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	c := check{code: resp.StatusCode}
	switch {
	case err != nil:
		c.err = err.Error()
	case resp.StatusCode == http.StatusOK:
		if err := json.Unmarshal(raw, &c.got); err != nil {
			c.err = "read API answer is not JSON: " + err.Error()
		}
	default:
		c.err = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return c
}

// converge reads every payment until all match or the deadline (the
// --settle timeout) passes; it returns the last reading of each. The projector and the
// Mercado Pago fetch jobs are asynchronous, so visibility is eventual.
func (r *reader) converge(ctx context.Context, payments []*Payment, workers int, deadline time.Time, pause time.Duration) map[*Payment]check {
	last := make(map[*Payment]check, len(payments))
	pending := payments
	for {
		results := r.readAll(ctx, pending, workers)
		var next []*Payment
		for i, p := range pending {
			last[p] = results[i]
			if results[i].code != http.StatusOK || results[i].diff != "" {
				next = append(next, p)
			}
		}
		pending = next
		if len(pending) == 0 || time.Now().Add(pause).After(deadline) {
			return last
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(pause):
		}
	}
}

// readAll reads payments with a bounded number of workers.
func (r *reader) readAll(ctx context.Context, payments []*Payment, workers int) []check {
	out := make([]check, len(payments))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = r.read(ctx, payments[i])
			}
		}()
	}
	for i := range payments {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}
