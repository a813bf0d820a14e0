package pagarme

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payledger/payledger/domain"
)

// maxJWKSSize bounds the JWKS body; Pagar.me's is a few kilobytes.
const maxJWKSSize = 1 << 20

// keySet is the cached JWKS. Lookups of known kids read an immutable
// snapshot without locking; fetches are serialised by mu, and rate limited
// by lastAttempt whatever their outcome, so neither forged kids nor a
// failing JWKS host make us fetch more than once per interval.
type keySet struct {
	url      string
	client   *http.Client
	timeout  time.Duration
	interval time.Duration // minimum time between fetches
	maxAge   time.Duration // refresh a snapshot older than this

	cur atomic.Pointer[keySnapshot] // nil until the first successful fetch

	mu          sync.Mutex // serialises fetches; guards the fields below
	lastAttempt time.Time
	lastErr     error // of the last attempt; nil after a success
}

// keySnapshot is one successfully fetched key set; never mutated.
type keySnapshot struct {
	keys      map[string][]*rsa.PublicKey // by kid; a repeated kid keeps every key
	fetchedAt time.Time
}

func newKeySet(cfg Config) *keySet {
	ks := &keySet{url: cfg.JWKSURL, client: cfg.HTTPClient, timeout: cfg.JWKSTimeout,
		interval: cfg.JWKSRefetchInterval, maxAge: cfg.JWKSMaxAge}
	if ks.client == nil {
		ks.client = &http.Client{}
	}
	if ks.timeout <= 0 {
		ks.timeout = DefaultJWKSTimeout
	}
	if ks.interval <= 0 {
		ks.interval = DefaultJWKSRefetchInterval
	}
	if ks.maxAge <= 0 {
		ks.maxAge = DefaultJWKSMaxAge
	}
	return ks
}

// lookup returns the keys published under kid, fetching the JWKS when the
// kid is unknown or the cache is old, within the rate limit. An unknown kid
// is KindInvalid (ErrUnknownKey) when the key set could be read within the
// last interval, and KindUnavailable (ErrKeysUnavailable) when it could not.
func (ks *keySet) lookup(ctx context.Context, kid string, now time.Time) ([]*rsa.PublicKey, error) {
	snap := ks.cur.Load()
	if keys := snap.get(kid); keys != nil {
		if now.Sub(snap.fetchedAt) < ks.maxAge || !ks.mu.TryLock() {
			return keys, nil // fresh, or another delivery is refreshing
		}
		defer ks.mu.Unlock()
		if fresh, err := ks.fetchLocked(ctx, now); err == nil {
			if keys := fresh.get(kid); keys != nil {
				return keys, nil
			}
			return nil, unknownKey(kid, "is no longer in the JWKS")
		}
		return keys, nil // rate limited or fetch failed: keep verifying with what we have
	}

	ks.mu.Lock()
	defer ks.mu.Unlock()
	if keys := ks.cur.Load().get(kid); keys != nil {
		return keys, nil // fetched while we waited
	}
	if _, err := ks.fetchLocked(ctx, now); err != nil {
		if ks.lastErr == nil { // rate limited after a good fetch
			return nil, unknownKey(kid, "is not in the JWKS fetched at "+ks.lastAttempt.UTC().Format(time.RFC3339))
		}
		return nil, domain.Unavailable(opVerify, "key "+quote(kid)+" is unknown and the JWKS cannot be fetched now; retry later",
			fmt.Errorf("%w: %w", ErrKeysUnavailable, ks.lastErr))
	}
	if keys := ks.cur.Load().get(kid); keys != nil {
		return keys, nil
	}
	return nil, unknownKey(kid, "is not in the JWKS")
}

func unknownKey(kid, why string) error {
	return domain.Invalid(opVerify, HeaderAsymmetric+" key "+quote(kid)+" "+why, ErrUnknownKey)
}

// errRateLimited: a fetch was wanted within interval of the last attempt.
var errRateLimited = errors.New("JWKS fetch rate limited")

// fetchLocked fetches and installs the key set unless the last attempt was
// within the interval (the clock may also have stepped back by more than
// the interval, which allows a fetch: a wall clock is not an attacker). The
// caller holds mu. A failure keeps the previous snapshot.
func (ks *keySet) fetchLocked(ctx context.Context, now time.Time) (*keySnapshot, error) {
	if !ks.lastAttempt.IsZero() {
		if d := now.Sub(ks.lastAttempt); d < ks.interval && d > -ks.interval {
			return nil, errRateLimited
		}
	}
	ks.lastAttempt = now
	keys, err := ks.fetch(ctx)
	ks.lastErr = err
	if err != nil {
		return nil, err
	}
	snap := &keySnapshot{keys: keys, fetchedAt: now}
	ks.cur.Store(snap)
	return snap, nil
}

// fetch GETs and decodes the JWKS within the JWKS timeout. It keeps ctx's
// values but not its cancellation: the attempt counts against the rate limit
// for every delivery, so one client hanging up must not fail it for all.
func (ks *keySet) fetch(ctx context.Context) (map[string][]*rsa.PublicKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ks.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := ks.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jwks: get: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSSize+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("jwks: read: %w", err)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("jwks: get: HTTP %d", resp.StatusCode)
	case len(body) > maxJWKSSize:
		return nil, fmt.Errorf("jwks: body is over %d bytes", maxJWKSSize)
	}
	return parseJWKS(body)
}

// get returns the keys of kid; a nil snapshot knows none.
func (s *keySnapshot) get(kid string) []*rsa.PublicKey {
	if s == nil {
		return nil
	}
	return s.keys[kid]
}

// cached returns the keys of kid in the snapshot held now, never fetching;
// a nil key set (RS256 not configured) holds none.
func (ks *keySet) cached(kid string) []*rsa.PublicKey {
	if ks == nil {
		return nil
	}
	return ks.cur.Load().get(kid)
}
