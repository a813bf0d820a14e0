package pagarme

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The spec's self-computed legacy vector (providers.md §4.2).
const (
	vectorSecret = "sk_test_0000000000000000000000"
	vectorHub    = "sha1=9f7e12a429ccb430630b0f9610d12ac25399ebd2"
)

// t0 is the test clock's start; the JWKS cache runs on the clock passed to
// Verify, so tests move time by passing later instants.
var t0 = time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)

// testKeys are two RSA keys, generated once per test binary: key
// generation is the slowest thing these tests do.
var testKeys = sync.OnceValue(func() [2]*rsa.PrivateKey {
	var keys [2]*rsa.PrivateKey
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keys[i] = k
	}
	return keys
})

func vectorBody(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors/pagarme_v5_payload.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jwksServer is a fake JWKS host whose keys and health tests change, and
// which counts the fetches.
type jwksServer struct {
	*httptest.Server
	fetches atomic.Int32

	mu   sync.Mutex
	keys map[string]*rsa.PublicKey
	down bool
}

func newJWKSServer(t testing.TB, keys map[string]*rsa.PublicKey) *jwksServer {
	t.Helper()
	s := &jwksServer{keys: keys}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		keys, down := s.keys, s.down
		s.mu.Unlock()
		if down {
			http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
			return
		}
		b, err := MarshalJWKS(keys)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) setKeys(keys map[string]*rsa.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = keys
}

func (s *jwksServer) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

func newProvider(t testing.TB, cfg Config) *Provider {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// signRS256 signs body with key under kid, failing the test on error.
func signRS256(t testing.TB, body []byte, key *rsa.PrivateKey, kid string) string {
	t.Helper()
	h, err := SignRS256(body, key, kid)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// headers builds request headers from name/value pairs.
func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}
