package main

import (
	"crypto/rsa"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/payledger/payledger/providers/pagarme"
)

// providerAPI serves the providers' status APIs and Pagar.me's JWKS from
// the ground truth: a payment is visible from the moment its first webhook
// is sent, and answers the state after the latest step sent so far, as the
// real provider's state runs ahead of its webhooks.
type providerAPI struct {
	creds   Credentials
	jwks    []byte
	mu      sync.Mutex
	byKey   map[string]*Payment // provider/id
	shown   map[string]int      // provider/id → index of the step the API shows
	fetches [4]atomic.Int64     // per provider, in allProviders order
}

func newProviderAPI(creds Credentials, kid string, key *rsa.PublicKey, payments []*Payment) (*providerAPI, error) {
	jwks, err := pagarme.MarshalJWKS(map[string]*rsa.PublicKey{kid: key})
	if err != nil {
		return nil, err
	}
	a := &providerAPI{creds: creds, jwks: jwks, byKey: make(map[string]*Payment, len(payments)), shown: map[string]int{}}
	for _, p := range payments {
		a.byKey[p.Key()] = p
	}
	return a, nil
}

// advance makes the API show p at least as far as step.
func (a *providerAPI) advance(p *Payment, step int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur, ok := a.shown[p.Key()]; !ok || step > cur {
		a.shown[p.Key()] = step
	}
}

// current returns the API body of provider/id, or nil if unknown so far.
func (a *providerAPI) current(provider, id string) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := provider + "/" + id
	i, ok := a.shown[key]
	if !ok {
		return nil
	}
	return a.byKey[key].Steps[i].API
}

// handler routes the fake APIs. Each provider lives under its own prefix,
// which is the API base the ledger is configured with.
func (a *providerAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/jwks.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(a.jwks)
	})
	mux.HandleFunc("GET /mercadopago/v1/payments/{id}", a.serve(mercadoPagoName, 1, func(r *http.Request) bool {
		return r.Header.Get("Authorization") == "Bearer "+a.creds.MercadoPagoToken
	}))
	mux.HandleFunc("GET /asaas/v3/payments/{id}", a.serve(asaasName, 2, func(r *http.Request) bool {
		return r.Header.Get("access_token") == a.creds.AsaasAPIKey
	}))
	mux.HandleFunc("GET /pagarme/core/v5/charges/{id}", a.serve(pagarmeName, 3, func(r *http.Request) bool {
		user, _, ok := r.BasicAuth()
		return ok && user == a.creds.PagarmeAPIKey
	}))
	return mux
}

// serve answers GET …/{id} for provider after authorized accepts the request.
func (a *providerAPI) serve(provider string, n int, authorized func(*http.Request) bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.fetches[n].Add(1)
		w.Header().Set("Content-Type", "application/json")
		if !authorized(r) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"message":"invalid credentials","status":401}`))
			return
		}
		body := a.current(provider, strings.TrimSpace(r.PathValue("id")))
		if body == nil {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"not found","status":404}`))
			return
		}
		_, _ = w.Write(body)
	}
}

// fetchCounts reports the API calls served per provider.
func (a *providerAPI) fetchCounts() map[string]int64 {
	out := map[string]int64{}
	for i, name := range allProviders() {
		if n := a.fetches[i].Load(); n > 0 {
			out[name] = n
		}
	}
	return out
}
