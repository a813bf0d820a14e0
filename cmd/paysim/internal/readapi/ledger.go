package readapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Balance is one account of GET /v1/ledger/balances.
type Balance struct {
	Account  string `json:"account"`
	Provider string `json:"provider"`
	Currency string `json:"currency"`
	Normal   string `json:"normal"`
	Debits   int64  `json:"debits"`
	Credits  int64  `json:"credits"`
	Balance  int64  `json:"balance"`
}

// Balances is an answer of GET /v1/ledger/balances.
type Balances struct {
	AsOf     string    `json:"as_of"`
	Basis    string    `json:"basis"`
	Balances []Balance `json:"balances"`
}

// BalanceQuery is the query of a balances read; zero fields are left to
// the ledger's defaults (now, effective).
type BalanceQuery struct {
	AsOf  time.Time
	Basis string
}

// URL is the query's path and query string, as reports name it.
func (q BalanceQuery) URL() string {
	v := url.Values{}
	if !q.AsOf.IsZero() {
		v.Set("as_of", q.AsOf.UTC().Format(time.RFC3339Nano))
	}
	if q.Basis != "" {
		v.Set("basis", q.Basis)
	}
	if len(v) == 0 {
		return "/v1/ledger/balances"
	}
	return "/v1/ledger/balances?" + v.Encode()
}

// Balances reads the ledger's balances. Any answer but 200 with the JSON
// body is an error: an empty answer must never read as zero books.
func (c *Client) Balances(ctx context.Context, q BalanceQuery) (Balances, error) {
	var b Balances
	raw, err := c.get(ctx, q.URL(), 16<<20)
	if err != nil {
		return b, fmt.Errorf("balances: %w", err)
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return b, fmt.Errorf("balances: answer is not JSON: %w", err)
	}
	if b.Balances == nil {
		return b, fmt.Errorf("balances: answer has no balances list")
	}
	return b, nil
}

// StreamLength is how many events the payment's stream holds, read from
// the event store (GET …/events): the read model has caught up with it once
// its event_count is as high.
func (c *Client) StreamLength(ctx context.Context, provider, id string) (int, error) {
	raw, err := c.get(ctx, "/v1/payments/"+url.PathEscape(provider)+"/"+url.PathEscape(id)+"/events", 8<<20)
	if err != nil {
		return 0, fmt.Errorf("events of %s/%s: %w", provider, id, err)
	}
	var body struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return 0, fmt.Errorf("events of %s/%s: answer is not JSON: %w", provider, id, err)
	}
	return len(body.Events), nil
}

// StatusError is a read API answer other than 200.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d", e.Code) }

// get reads path with the bearer token; an answer other than 200 is a
// *StatusError.
func (c *Client) get(ctx context.Context, path string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Ledger+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{Code: resp.StatusCode}
	}
	return raw, nil
}
