package fakeapi

import (
	"crypto/rsa"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/providers/pagarme"
)

// Credentials are what the fake APIs accept; the ledger must be configured
// with the same (paysim env).
type Credentials struct {
	StripeAPIKey     string // Bearer secret key
	MercadoPagoToken string // access token
	AsaasAPIKey      string // access_token header
	PagarmeAPIKey    string // HTTP Basic user
}

// API serves the providers' status APIs and Pagar.me's JWKS from
// the ground truth: a payment is visible from the moment its first webhook
// is sent, and answers the state after the latest step sent so far, as the
// real provider's state runs ahead of its webhooks.
type API struct {
	creds   Credentials
	jwks    []byte
	mu      sync.Mutex
	byKey   map[string]*truth.Payment // provider/id
	shown   map[string]int            // provider/id → index of the step the API shows
	btSeen  map[string]bool           // Stripe payments whose balance transaction was served (FeeLate)
	fetches [4]atomic.Int64           // per provider, in truth.Providers order
	lists   *index                    // what the list endpoints filter and page on (list.go)
}

// New returns the APIs of payments, with key served in the JWKS as kid.
func New(creds Credentials, kid string, key *rsa.PublicKey, payments []*truth.Payment) (*API, error) {
	jwks, err := pagarme.MarshalJWKS(map[string]*rsa.PublicKey{kid: key})
	if err != nil {
		return nil, err
	}
	a := &API{creds: creds, jwks: jwks, byKey: make(map[string]*truth.Payment, len(payments)), shown: map[string]int{},
		btSeen: map[string]bool{}}
	for _, p := range payments {
		a.byKey[p.Key()] = p
	}
	if a.lists, err = newIndex(payments); err != nil {
		return nil, err
	}
	return a, nil
}

// Advance makes the API show p at least as far as step.
func (a *API) Advance(p *truth.Payment, step int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur, ok := a.shown[p.Key()]; !ok || step > cur {
		a.shown[p.Key()] = step
	}
}

// current returns the API body of provider/id, or nil if unknown so far.
func (a *API) current(provider, id string) []byte {
	if p, step := a.step(provider, id); p != nil {
		return p.Steps[step].API
	}
	return nil
}

// step returns provider/id and the index of the step its API shows, or nil
// if unknown so far.
func (a *API) step(provider, id string) (*truth.Payment, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := provider + "/" + id
	i, ok := a.shown[key]
	if !ok {
		return nil, 0
	}
	return a.byKey[key], i
}

// Handler routes the fake APIs. Each provider lives under its own prefix,
// which is the API base the ledger is configured with.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/jwks.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(a.jwks)
	})
	stripeAuth := func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+a.creds.StripeAPIKey }
	mux.HandleFunc("GET /stripe/v1/payment_intents/{id}", a.serveWith(0, stripeAuth, a.stripeIntent))
	mux.HandleFunc("GET /stripe/v1/disputes", a.serveWith(0, stripeAuth, a.stripeDisputes))
	mux.HandleFunc("GET /stripe/v1/events", a.serveStatus(0, stripeAuth, a.stripeEvents))
	mux.HandleFunc("GET /stripe/v1/charges/{id}", a.serveWith(0, stripeAuth, a.stripeCharge))
	mpAuth := func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+a.creds.MercadoPagoToken }
	mux.HandleFunc("GET /mercadopago/v1/payments/search", a.serveStatus(1, mpAuth, a.mercadoPagoSearch))
	asaasAuth := func(r *http.Request) bool { return r.Header.Get("access_token") == a.creds.AsaasAPIKey }
	mux.HandleFunc("GET /asaas/v3/payments", a.serveStatus(2, asaasAuth, a.asaasList))
	pagarmeAuth := func(r *http.Request) bool {
		user, _, ok := r.BasicAuth()
		return ok && user == a.creds.PagarmeAPIKey
	}
	mux.HandleFunc("GET /pagarme/core/v5/charges", a.serveStatus(3, pagarmeAuth, a.pagarmeList))
	mux.HandleFunc("GET /mercadopago/v1/payments/{id}", a.serve(truth.MercadoPago, 1, mpAuth))
	mux.HandleFunc("GET /asaas/v3/payments/{id}", a.serve(truth.Asaas, 2, asaasAuth))
	mux.HandleFunc("GET /pagarme/core/v5/charges/{id}", a.serve(truth.Pagarme, 3, pagarmeAuth))
	return mux
}

// serve answers GET …/{id} for provider after authorized accepts the request.
func (a *API) serve(provider string, n int, authorized func(*http.Request) bool) http.HandlerFunc {
	return a.serveWith(n, authorized, func(r *http.Request) []byte {
		return a.current(provider, strings.TrimSpace(r.PathValue("id")))
	})
}

// serveWith answers with what body returns for the request (nil: 404)
// after authorized accepts it, counting the call as provider n's.
func (a *API) serveWith(n int, authorized func(*http.Request) bool, body func(*http.Request) []byte) http.HandlerFunc {
	return a.serveStatus(n, authorized, func(r *http.Request) (int, []byte) {
		if b := body(r); b != nil {
			return http.StatusOK, b
		}
		return http.StatusNotFound, []byte(`{"message":"not found","status":404}`)
	})
}

// serveStatus answers with the status and body answer returns after
// authorized accepts the request, counting the call as provider n's.
func (a *API) serveStatus(n int, authorized func(*http.Request) bool, answer func(*http.Request) (int, []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.fetches[n].Add(1)
		w.Header().Set("Content-Type", "application/json")
		if !authorized(r) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"message":"invalid credentials","status":401}`))
			return
		}
		code, b := answer(r)
		w.WriteHeader(code)
		_, _ = w.Write(b)
	}
}

// FetchCounts reports the API calls served per provider.
func (a *API) FetchCounts() map[string]int64 {
	out := map[string]int64{}
	for i, name := range truth.Providers() {
		if n := a.fetches[i].Load(); n > 0 {
			out[name] = n
		}
	}
	return out
}
