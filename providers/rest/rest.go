package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/backoff"
)

// Options are the settings every provider's status client takes: each
// provider's StatusConfig embeds them beside its credentials. Zero values
// take the defaults.
type Options struct {
	// BaseURL is the API root; empty means the provider's production API.
	// Tests point it at a fake.
	BaseURL string
	// Timeout bounds one attempt (default 10s).
	Timeout time.Duration
	// MaxAttempts bounds the attempts of one call (default 4); the job queue
	// retries failed fetches later with its own backoff.
	MaxAttempts int
	// RetryMin and RetryMax bound the backoff between attempts (defaults
	// 200ms and 5s).
	RetryMin, RetryMax time.Duration
	// UserAgent is sent on every request when set (Asaas requires one).
	UserAgent string
	// Now stamps observations when the provider's answer carries no time
	// (default time.Now).
	Now func() time.Time
	// HTTPClient defaults to a client with no overall timeout (Timeout
	// bounds attempts).
	HTTPClient *http.Client
}

// Config configures a Client.
type Config struct {
	// Provider names the provider in errors ("mercadopago").
	Provider string
	// DefaultBaseURL is used when Options.BaseURL is empty; one of them is
	// required.
	DefaultBaseURL string
	// Options are the caller's settings, from the provider's StatusConfig.
	Options
	// MaxRetryAfter caps how long a Retry-After may make a call wait (default 30s);
	// longer answers fail the call so the job queue retries it later.
	MaxRetryAfter time.Duration
	// Authorize adds credentials to every request.
	Authorize func(*http.Request)
}

// Client GETs JSON from one provider's API. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base *url.URL
}

// New validates cfg and applies defaults.
func New(cfg Config) (*Client, error) {
	if cfg.Provider == "" {
		return nil, errors.New("rest: provider name is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = cfg.DefaultBaseURL
	}
	base, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("rest: %s: base URL %q is not an http(s) URL", cfg.Provider, cfg.BaseURL)
	}
	cfg.Options = cfg.Options.withDefaults()
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = 30 * time.Second
	}
	return &Client{cfg: cfg, base: base}, nil
}

// withDefaults returns o with every zero setting replaced by its default.
func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 4
	}
	if o.RetryMin <= 0 {
		o.RetryMin = 200 * time.Millisecond
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(5*time.Second, o.RetryMin)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	return o
}

// Now is the clock observations are stamped with when the provider gives
// no time.
func (c *Client) Now() time.Time { return c.cfg.Now() }

// Error is a failed call: which provider, which payment, what the API said.
type Error struct {
	Provider  string
	PaymentID string
	Status    int // HTTP status of the last attempt; 0 when none answered
	Attempts  int
	Err       error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: fetch payment %s: HTTP %d after %d attempt(s): %v", e.Provider, e.PaymentID, e.Status, e.Attempts, e.Err)
	}
	return fmt.Sprintf("%s: fetch payment %s: after %d attempt(s): %v", e.Provider, e.PaymentID, e.Attempts, e.Err)
}

// Unwrap exposes the cause and the domain kind wrapper.
func (e *Error) Unwrap() error { return e.Err }

// GetJSON fetches path (relative to the base URL, already escaped by the
// caller with url.PathEscape for IDs) and decodes the JSON body into out with
// numbers kept as json.Number. 404 is domain.ErrUnknownPayment; exhausted
// retries and refusals are KindUnavailable; 401 and 403 are KindUnauthorized
// (our credentials were refused: every call will fail alike until someone
// fixes the key); other 4xx are KindInternal (a configuration problem, not
// worth retrying quickly).
func (c *Client) GetJSON(ctx context.Context, path, paymentID string, out any) error {
	var last error
	status := 0
	for attempt := 1; attempt <= c.cfg.MaxAttempts; attempt++ {
		var retryAfter time.Duration
		var retry bool
		status, retryAfter, retry, last = c.once(ctx, path, out)
		if last == nil {
			return nil
		}
		if !retry || attempt == c.cfg.MaxAttempts {
			return &Error{Provider: c.cfg.Provider, PaymentID: paymentID, Status: status, Attempts: attempt, Err: last}
		}
		wait := backoff.Exponential{Min: c.cfg.RetryMin, Max: c.cfg.RetryMax}.Delay(attempt)
		if retryAfter > 0 {
			if retryAfter > c.cfg.MaxRetryAfter {
				return &Error{Provider: c.cfg.Provider, PaymentID: paymentID, Status: status, Attempts: attempt,
					Err: domain.Unavailable("rest", fmt.Sprintf("asked to retry after %s", retryAfter), last)}
			}
			wait = retryAfter
		}
		if err := backoff.Sleep(ctx, wait); err != nil {
			return &Error{Provider: c.cfg.Provider, PaymentID: paymentID, Status: status, Attempts: attempt, Err: err}
		}
	}
	return &Error{Provider: c.cfg.Provider, PaymentID: paymentID, Status: status, Attempts: c.cfg.MaxAttempts, Err: last}
}

// once makes one attempt. It reports the status, a Retry-After, whether the
// failure is worth retrying, and the error.
func (c *Client) once(parent context.Context, path string, out any) (int, time.Duration, bool, error) {
	ctx, cancel := context.WithTimeout(parent, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.String()+"/"+strings.TrimLeft(path, "/"), nil)
	if err != nil {
		return 0, 0, false, domain.Invalid("rest", "bad request path", err)
	}
	req.Header.Set("Accept", "application/json")
	if c.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", c.cfg.UserAgent)
	}
	if c.cfg.Authorize != nil {
		c.cfg.Authorize(req)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		// Network errors and attempt timeouts are retried; the caller's own
		// cancellation is not.
		return 0, 0, parent.Err() == nil, domain.Unavailable("rest", "no answer", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return resp.StatusCode, 0, true, domain.Unavailable("rest", "reading the answer", err)
	}
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			return code, 0, false, domain.Invalid("rest", "answer is not the expected JSON", err)
		}
		return code, 0, false, nil
	case code == http.StatusNotFound:
		return code, 0, false, fmt.Errorf("%w: %s", domain.ErrUnknownPayment, snippet(body))
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return code, 0, false, domain.Unauthorized("rest", http.StatusText(code), errors.New(snippet(body)))
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return code, retryAfter(resp.Header.Get("Retry-After"), time.Now()), true,
			domain.Unavailable("rest", http.StatusText(code), errors.New(snippet(body)))
	default:
		return code, 0, false, &domain.Error{Kind: domain.KindInternal, Op: "rest", Msg: http.StatusText(code), Err: errors.New(snippet(body))}
	}
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// snippet keeps error bodies short in logs; they may be HTML error pages.
func snippet(b []byte) string {
	const n = 200
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
