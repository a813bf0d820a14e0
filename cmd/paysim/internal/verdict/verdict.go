package verdict

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// check is the last reading of one payment.
type check struct {
	readapi.Answer
	diff string // "" when the payment matches its truth
}

// Readings are the last reading of every payment, for Build.
type Readings map[*truth.Payment]check

// diff compares a reading with the payment's final truth. The event count
// is exact where every webhook is one stored event, a range where fee facts
// may come on top (Asaas, Stripe); for Mercado Pago it is at least the
// notifications plus one status observation. With unsent webhooks withheld
// (--drop, --outage) it is only at least the webhooks delivered: how many
// observations a reconciliation or a backfill adds is theirs to decide.
func diff(p *truth.Payment, got readapi.Payment, unsent int) string {
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
	case unsent > 0 && p.Events > 0 && got.EventCount < p.Events-unsent:
		d += fmt.Sprintf(" event_count: want at least %d (%d webhooks withheld), got %d;", p.Events-unsent, unsent, got.EventCount)
	case unsent > 0 && p.Events == 0 && got.EventCount < len(p.Steps)-unsent+1:
		d += fmt.Sprintf(" event_count: want at least %d (%d notifications withheld), got %d;", len(p.Steps)-unsent+1, unsent, got.EventCount)
	case unsent > 0:
	case p.Events > 0 && p.FeeFacts == 0:
		add("event_count", p.Events, got.EventCount)
	case p.Events > 0 && (got.EventCount < p.Events || got.EventCount > p.Events+p.FeeFacts):
		d += fmt.Sprintf(" event_count: want %d to %d (fee facts), got %d;", p.Events, p.Events+p.FeeFacts, got.EventCount)
	case p.Events > 0:
	case got.EventCount < len(p.Steps)+1:
		d += fmt.Sprintf(" event_count: want at least %d, got %d;", len(p.Steps)+1, got.EventCount)
	}
	return d
}

// read fetches one payment and compares it with its truth.
func read(ctx context.Context, c *readapi.Client, p *truth.Payment, unsent int) check {
	r := check{Answer: c.Fetch(ctx, p)}
	switch {
	case r.Code == http.StatusOK && r.Err != "":
		r.diff = r.Err // an unreadable answer is not a match
	case r.Code == http.StatusOK:
		r.diff = diff(p, r.Got, unsent)
	}
	return r
}

// Converge reads every payment until all match or the deadline (the
// --settle timeout) passes; it returns the last reading of each. The
// projector and the Mercado Pago fetch jobs are asynchronous, so visibility
// is eventual. unsent names each payment's withheld webhooks (nil: none).
func Converge(ctx context.Context, c *readapi.Client, payments []*truth.Payment, unsent map[string][]string, workers int, deadline time.Time, pause time.Duration) Readings {
	last := make(Readings, len(payments))
	pending := payments
	for {
		results := readAll(ctx, c, pending, unsent, workers)
		var next []*truth.Payment
		for i, p := range pending {
			last[p] = results[i]
			if results[i].Code != http.StatusOK || results[i].diff != "" {
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
func readAll(ctx context.Context, c *readapi.Client, payments []*truth.Payment, unsent map[string][]string, workers int) []check {
	out := make([]check, len(payments))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = read(ctx, c, payments[i], len(unsent[payments[i].Key()]))
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
