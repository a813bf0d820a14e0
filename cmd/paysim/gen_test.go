package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/asaas"
	"github.com/payledger/payledger/providers/mercadopago"
	"github.com/payledger/payledger/providers/pagarme"
	"github.com/payledger/payledger/providers/rest"
	"github.com/payledger/payledger/providers/stripe"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, err := Generate(7, 200, allProviders(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(7, 200, allProviders(), nil)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed generated different payments")
	}
	// Payment i does not depend on n.
	c, _ := Generate(7, 50, allProviders(), nil)
	if !reflect.DeepEqual(a[:50], c) {
		t.Error("the first 50 payments change with n")
	}
	d, _ := Generate(8, 200, allProviders(), nil)
	seen := map[string]bool{}
	for _, p := range a {
		if seen[p.Key()] {
			t.Errorf("payment ID %s twice in one run", p.Key())
		}
		seen[p.Key()] = true
	}
	for _, p := range d {
		if seen[p.Key()] {
			t.Errorf("seeds 7 and 8 both generate %s", p.Key())
		}
	}
}

func TestGenerateReachesEveryLifecycle(t *testing.T) {
	ps, err := Generate(1, 2000, allProviders(), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, p := range ps {
		seen[p.Provider+"/"+p.Lifecycle]++
	}
	for _, prov := range allProviders() {
		for _, lc := range lifecycles(prov) {
			if seen[prov+"/"+lc] == 0 {
				t.Errorf("lifecycle %s/%s never generated in 2000 payments", prov, lc)
			}
		}
	}
	skipped, _ := Generate(1, 400, []string{pagarmeName}, []string{"pagarme/canceled"})
	for _, p := range skipped {
		if p.Lifecycle == "canceled" {
			t.Fatal("a skipped lifecycle was generated")
		}
	}
}

// TestTruthsAgreeWithProviders checks the hand-written truths against the
// real provider packages and the domain fold: after every prefix of every
// lifecycle, the verified, parsed and folded webhooks (and, for Mercado Pago,
// the fake API's answer through the real status client) give the truth of
// that step, in reverse arrival order too.
func TestTruthsAgreeWithProviders(t *testing.T) {
	cfg, err := parseConfig("run", []string{"--api-addr", "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payments, err := Generate(3, 400, allProviders(), nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := signingKey("")
	sg := &signer{creds: cfg.Creds, key: key, kid: keyID(&key.PublicKey)}
	api, err := newProviderAPI(cfg.Creds, sg.kid, &key.PublicKey, payments)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.handler())
	t.Cleanup(srv.Close)
	parsers := providerParsers(t, cfg.Creds, srv.URL)
	mp, err := mercadopago.NewStatusClient(mercadopago.StatusConfig{AccessToken: cfg.Creds.MercadoPagoToken,
		Options: rest.Options{BaseURL: srv.URL + "/mercadopago"}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, p := range payments {
		var events []domain.Event
		for k := range p.Steps {
			w := &p.Steps[k].Webhook
			h, err := sg.headers(p, w, now)
			if err != nil {
				t.Fatal(err)
			}
			q, _ := url.ParseQuery(w.Query)
			prov := parsers[p.Provider]
			if err := prov.Verify(t.Context(), h, q, w.Body, now); err != nil {
				t.Fatalf("%s step %d: verify: %v", p.Key(), k, err)
			}
			n, err := prov.Parse(t.Context(), h, q, w.Body)
			if err != nil || len(n.Events) != 1 {
				t.Fatalf("%s step %d: parse: %v, %d events", p.Key(), k, err, len(n.Events))
			}
			events = append(events, n.Events...)
			all := append([]domain.Event(nil), events...)
			if p.Provider == mercadoPagoName {
				api.advance(p, k)
				obs, err := mp.FetchStatus(context.Background(), p.ID)
				if err != nil {
					t.Fatalf("%s step %d: fetch: %v", p.Key(), k, err)
				}
				all = append(all, obs)
			}
			for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
				all[i], all[j] = all[j], all[i]
			}
			got := domain.Fold(all...).State()
			want := p.Steps[k].Truth
			if got.Status != want.Status || got.Amount != want.Amount || got.AmountRefunded != want.Refunded || got.Currency != want.Currency {
				t.Errorf("%s [%s] after step %d (%s): folded %s %d/%d %s, truth %+v", p.Key(), p.Lifecycle, k, w.Type,
					got.Status, got.Amount, got.AmountRefunded, got.Currency, want)
			}
			if len(got.ReviewReasons) > 0 {
				t.Errorf("%s [%s] after step %d: review reasons %v", p.Key(), p.Lifecycle, k, got.ReviewReasons)
			}
		}
		if p.Events > 0 && p.Events != len(events) {
			t.Errorf("%s: Events = %d, want %d", p.Key(), p.Events, len(events))
		}
	}
}

// webhookProvider is what the ledger's api package calls on a provider.
type webhookProvider interface {
	Verify(ctx context.Context, header http.Header, query url.Values, body []byte, now time.Time) error
	Parse(ctx context.Context, header http.Header, query url.Values, body []byte) (domain.Notification, error)
}

func providerParsers(t *testing.T, c Credentials, apiBase string) map[string]webhookProvider {
	t.Helper()
	s, err := stripe.New(stripe.Config{Secrets: []string{c.StripeSecret}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mercadopago.New(mercadopago.Config{Secrets: []string{c.MercadoPagoSecret}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := asaas.New(asaas.Config{Tokens: []string{c.AsaasToken}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pagarme.New(pagarme.Config{JWKSURL: apiBase + "/.well-known/jwks.json"})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]webhookProvider{stripeName: s, mercadoPagoName: m, asaasName: a, pagarmeName: p}
}

func TestPlanSendsEveryStep(t *testing.T) {
	ps, _ := Generate(5, 200, allProviders(), nil)
	for _, c := range []Chaos{{}, {Dup: 1, Reorder: 1, MaxDelay: time.Millisecond}, {Dup: 0.3, Reorder: 0.3}} {
		for i, p := range ps {
			groups := plan(planRand(5, i), p, c)
			count := make([]int, len(p.Steps))
			for _, g := range groups {
				for _, s := range g {
					count[s.step]++
				}
			}
			for k, n := range count {
				switch {
				case n == 0:
					t.Fatalf("%+v: %s step %d never sent", c, p.Key(), k)
				case c.Dup == 0 && n != 1, c.Dup == 1 && n != 2:
					t.Fatalf("%+v: %s step %d sent %d times", c, p.Key(), k, n)
				}
			}
			if c.Reorder == 0 && c.Dup == 0 {
				for k, g := range groups {
					if g[0].step != k {
						t.Fatalf("%s: without chaos, group %d sends step %d", p.Key(), k, g[0].step)
					}
				}
			}
		}
	}
}
