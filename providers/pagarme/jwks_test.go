package pagarme

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

// step is one delivery in a JWKS cache scenario: what the JWKS host serves
// from now on, when the delivery arrives, which kid it names and whether it
// is signed by that kid's key, and what must happen.
type step struct {
	at       time.Duration // after t0
	setKeys  []string      // kids to publish from now on (k1 = key 0, k2 = key 1); nil: unchanged
	down     *bool         // JWKS host health from now on; nil: unchanged
	kid      string
	forged   bool  // signed by the wrong key
	wantErr  error // nil: accepted
	wantKind domain.Kind
	fetches  int32 // JWKS fetches so far, after this step
}

func TestJWKSCache(t *testing.T) {
	down, up := ptr(true), ptr(false)
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "first delivery fetches, later ones use the cache", steps: []step{
			{at: 0, kid: "k1", fetches: 1},
			{at: 30 * time.Second, kid: "k1", fetches: 1},
			{at: 59 * time.Minute, kid: "k1", fetches: 1},
		}},
		{name: "rotation: an unknown kid refetches once, then verifies", steps: []step{
			{at: 0, kid: "k1", fetches: 1},
			{at: 2 * time.Minute, setKeys: []string{"k1", "k2"}, kid: "k2", fetches: 2},
			{at: 3 * time.Minute, kid: "k2", fetches: 2},
			{at: 3 * time.Minute, kid: "k1", fetches: 2},
		}},
		{name: "rotation within the minute waits for the rate limit", steps: []step{
			{at: 0, kid: "k1", fetches: 1},
			{at: 10 * time.Second, setKeys: []string{"k1", "k2"}, kid: "k2", wantErr: ErrUnknownKey, wantKind: domain.KindInvalid, fetches: 1},
			{at: 60 * time.Second, kid: "k2", fetches: 2},
		}},
		{name: "JWKS down and unknown kid: unavailable, retried after the interval", steps: []step{
			{at: 0, down: down, kid: "k1", wantErr: ErrKeysUnavailable, wantKind: domain.KindUnavailable, fetches: 1},
			{at: 30 * time.Second, kid: "k1", wantErr: ErrKeysUnavailable, wantKind: domain.KindUnavailable, fetches: 1},
			{at: 40 * time.Second, down: up, kid: "k1", wantErr: ErrKeysUnavailable, wantKind: domain.KindUnavailable, fetches: 1},
			{at: 61 * time.Second, kid: "k1", fetches: 2},
		}},
		{name: "JWKS down: known keys keep verifying past their age, forgeries stay 400", steps: []step{
			{at: 0, kid: "k1", fetches: 1},
			{at: 2 * time.Hour, down: down, kid: "k1", fetches: 2},
			{at: 2*time.Hour + 10*time.Second, kid: "k1", fetches: 2},
			{at: 2*time.Hour + 20*time.Second, kid: "k1", forged: true, wantErr: ErrNoValidSignature, wantKind: domain.KindInvalid, fetches: 2},
			{at: 2*time.Hour + 30*time.Second, kid: "k2", wantErr: ErrKeysUnavailable, wantKind: domain.KindUnavailable, fetches: 2},
			{at: 2*time.Hour + 90*time.Second, kid: "k2", wantErr: ErrKeysUnavailable, wantKind: domain.KindUnavailable, fetches: 3},
			{at: 3 * time.Hour, down: up, setKeys: []string{"k1", "k2"}, kid: "k2", fetches: 4},
		}},
		{name: "a withdrawn key stops verifying once the cache is refreshed", steps: []step{
			{at: 0, kid: "k1", fetches: 1},
			{at: 30 * time.Minute, setKeys: []string{"k2"}, kid: "k1", fetches: 1},
			{at: 61 * time.Minute, kid: "k1", wantErr: ErrUnknownKey, wantKind: domain.KindInvalid, fetches: 2},
			{at: 61 * time.Minute, kid: "k2", fetches: 2},
		}},
		{name: "an empty publication keeps the previous keys", steps: []step{
			{at: 0, kid: "k1", fetches: 1},
			{at: 2 * time.Hour, setKeys: []string{}, kid: "k1", fetches: 2},
			{at: 2*time.Hour + 2*time.Minute, kid: "k2", wantErr: ErrKeysUnavailable, wantKind: domain.KindUnavailable, fetches: 3},
		}},
		{name: "the clock stepping back by more than the interval allows a fetch", steps: []step{
			{at: time.Hour, kid: "k1", fetches: 1},
			{at: 0, kid: "k2", wantErr: ErrUnknownKey, wantKind: domain.KindInvalid, fetches: 2},
			{at: 30 * time.Second, kid: "k2", wantErr: ErrUnknownKey, wantKind: domain.KindInvalid, fetches: 2},
		}},
	}
	body := vectorBody(t)
	keys := testKeys()
	byKid := map[string]*rsa.PrivateKey{"k1": keys[0], "k2": keys[1]}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newJWKSServer(t, map[string]*rsa.PublicKey{"k1": &keys[0].PublicKey})
			p := newProvider(t, Config{JWKSURL: srv.URL})
			for i, s := range tt.steps {
				if s.setKeys != nil {
					pub := map[string]*rsa.PublicKey{}
					for _, kid := range s.setKeys {
						pub[kid] = &byKid[kid].PublicKey
					}
					srv.setKeys(pub)
				}
				if s.down != nil {
					srv.setDown(*s.down)
				}
				signer := byKid[s.kid]
				if s.forged {
					signer = keys[0]
					if s.kid == "k1" {
						signer = keys[1]
					}
				}
				err := p.Verify(t.Context(), headers(HeaderAsymmetric, signRS256(t, body, signer, s.kid)), nil, body, t0.Add(s.at))
				switch {
				case s.wantErr == nil && err != nil:
					t.Fatalf("step %d: Verify() = %v, want ok", i, err)
				case s.wantErr != nil && (!errors.Is(err, s.wantErr) || domain.KindOf(err) != s.wantKind):
					t.Fatalf("step %d: Verify() = %v, want %v of kind %v", i, err, s.wantErr, s.wantKind)
				}
				if got := srv.fetches.Load(); got != s.fetches {
					t.Fatalf("step %d: %d JWKS fetches, want %d", i, got, s.fetches)
				}
			}
		})
	}
}

// TestJWKSFlood sends forged kids from many goroutines alongside genuine
// deliveries: the JWKS host sees at most one fetch per interval, genuine
// deliveries keep verifying, forged ones are 400.
func TestJWKSFlood(t *testing.T) {
	body := vectorBody(t)
	key := testKeys()[0]
	srv := newJWKSServer(t, map[string]*rsa.PublicKey{"k1": &key.PublicKey})
	p := newProvider(t, Config{JWKSURL: srv.URL})
	genuine := headers(HeaderAsymmetric, signRS256(t, body, key, "k1"))
	sig := genuine.Get(HeaderAsymmetric)
	sig = sig[strings.LastIndex(sig, "=")+1:]

	for minute := range 3 {
		// The minute starts with a forged kid that fetches (the first
		// fetch of the test, or the first one the interval allows) ...
		start := t0.Add(time.Duration(minute) * time.Minute)
		first := headers(HeaderAsymmetric, fmt.Sprintf("alg=RS256; kid=first-%d; signature=%s", minute, sig))
		if err := p.Verify(t.Context(), first, nil, body, start); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("minute %d: first forged kid: %v", minute, err)
		}
		// ... then 400 more spread over the next 40 s fetch nothing.
		var wg sync.WaitGroup
		errs := make(chan error, 8*50)
		for g := range 8 {
			wg.Go(func() {
				for i := range 50 {
					now := start.Add(time.Duration(g*50+i) * 100 * time.Millisecond)
					forged := headers(HeaderAsymmetric, fmt.Sprintf("alg=RS256; kid=forged-%d-%d-%d; signature=%s", minute, g, i, sig))
					if err := p.Verify(t.Context(), forged, nil, body, now); !errors.Is(err, ErrUnknownKey) || domain.KindOf(err) != domain.KindInvalid {
						errs <- fmt.Errorf("forged kid at %v: %v", now, err)
					}
					if i%10 == 0 {
						if err := p.Verify(t.Context(), genuine, nil, body, now); err != nil {
							errs <- fmt.Errorf("genuine at %v: %v", now, err)
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got := srv.fetches.Load(); got != int32(minute+1) {
			t.Fatalf("minute %d: %d JWKS fetches, want %d", minute, got, minute+1)
		}
	}
}

// TestJWKSFetchFailures: every way the JWKS can fail to load makes an
// unknown kid unavailable (503), never accepted.
func TestJWKSFetchFailures(t *testing.T) {
	key := testKeys()[0]
	good, err := MarshalJWKS(map[string]*rsa.PublicKey{"k1": &key.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{name: "404", handler: func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }},
		{name: "redirect loop", handler: func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, r.URL.String(), http.StatusFound) }},
		{name: "HTML error page", handler: func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>oops</html>")) }},
		{name: "no keys member", handler: func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"kid":"k1"}`)) }},
		{name: "over 1 MiB", handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(good[:len(good)-2])
			_, _ = w.Write([]byte(`,{"kid":"pad","x":"` + strings.Repeat("x", maxJWKSSize) + `"}]}`))
		}},
		{name: "timeout", handler: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}},
	}
	body := vectorBody(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			p := newProvider(t, Config{JWKSURL: srv.URL, JWKSTimeout: 100 * time.Millisecond})
			err := p.Verify(t.Context(), headers(HeaderAsymmetric, signRS256(t, body, key, "k1")), nil, body, t0)
			if !errors.Is(err, ErrKeysUnavailable) || domain.KindOf(err) != domain.KindUnavailable {
				t.Fatalf("Verify() = %v, want unavailable", err)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestJWKSFetchOutlivesCaller: the fetch runs with the caller's context but
// not its cancellation, since the attempt counts against the rate limit for
// every delivery: a client that hung up must not leave the keys unfetched.
func TestJWKSFetchOutlivesCaller(t *testing.T) {
	key := testKeys()[0]
	srv := newJWKSServer(t, map[string]*rsa.PublicKey{"k1": &key.PublicKey})
	p := newProvider(t, Config{JWKSURL: srv.URL})
	body := vectorBody(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Verify(ctx, headers(HeaderAsymmetric, signRS256(t, body, key, "k1")), nil, body, t0); err != nil {
		t.Fatalf("Verify() with a cancelled context = %v, want ok", err)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times, want 1", n)
	}
}
