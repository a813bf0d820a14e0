package gen_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/fakeapi"
	"github.com/payledger/payledger/cmd/paysim/internal/gen"
	"github.com/payledger/payledger/cmd/paysim/internal/sign"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/asaas"
	"github.com/payledger/payledger/providers/mercadopago"
	"github.com/payledger/payledger/providers/pagarme"
	"github.com/payledger/payledger/providers/rest"
	"github.com/payledger/payledger/providers/stripe"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, err := gen.Generate(7, 200, truth.Providers(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := gen.Generate(7, 200, truth.Providers(), nil)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed generated different payments")
	}
	// Payment i does not depend on n.
	c, _ := gen.Generate(7, 50, truth.Providers(), nil)
	if !reflect.DeepEqual(a[:50], c) {
		t.Error("the first 50 payments change with n")
	}
	d, _ := gen.Generate(8, 200, truth.Providers(), nil)
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
	ps, err := gen.Generate(1, 2000, truth.Providers(), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, p := range ps {
		seen[p.Provider+"/"+p.Lifecycle]++
	}
	for _, prov := range truth.Providers() {
		for _, lc := range gen.Lifecycles(prov) {
			if seen[prov+"/"+lc] == 0 {
				t.Errorf("lifecycle %s/%s never generated in 2000 payments", prov, lc)
			}
		}
	}
	skipped, _ := gen.Generate(1, 400, []string{truth.Pagarme}, []string{"pagarme/canceled"})
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
	secrets := sign.Secrets{Stripe: "whsec_paysim_secret", MercadoPago: "mp_paysim_secret", AsaasToken: "asaas_paysim_token"}
	creds := fakeapi.Credentials{MercadoPagoToken: "APP_USR-paysim", AsaasAPIKey: "$aact_paysim", PagarmeAPIKey: "sk_paysim"}
	payments, err := gen.Generate(3, 400, truth.Providers(), nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := sign.LoadKey("")
	sg := sign.New(secrets, key)
	api, err := fakeapi.New(creds, sg.KeyID(), &key.PublicKey, payments)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	parsers := providerParsers(t, secrets, srv.URL)
	mp, err := mercadopago.NewStatusClient(mercadopago.StatusConfig{AccessToken: creds.MercadoPagoToken,
		Options: rest.Options{BaseURL: srv.URL + "/mercadopago"}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, p := range payments {
		var events []domain.Event
		for k := range p.Steps {
			w := &p.Steps[k].Webhook
			h, err := sg.Headers(p, w, now)
			if err != nil {
				t.Fatal(err)
			}
			q, _ := url.ParseQuery(w.Query)
			prov := parsers[p.Provider]
			if err := prov.Verify(t.Context(), h, q, w.Body, now); err != nil {
				t.Fatalf("%s step %d: verify: %v", p.Key(), k, err)
			}
			n, err := prov.Parse(t.Context(), h, q, w.Body)
			if err != nil || len(n.Events) == 0 { // Asaas: the status and the fee
				t.Fatalf("%s step %d: parse: %v, %d events", p.Key(), k, err, len(n.Events))
			}
			events = append(events, n.Events...)
			all := append([]domain.Event(nil), events...)
			if p.Provider == truth.MercadoPago {
				api.Advance(p, k)
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

func providerParsers(t *testing.T, c sign.Secrets, apiBase string) map[string]webhookProvider {
	t.Helper()
	s, err := stripe.New(stripe.Config{Secrets: []string{c.Stripe}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mercadopago.New(mercadopago.Config{Secrets: []string{c.MercadoPago}})
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
	return map[string]webhookProvider{truth.Stripe: s, truth.MercadoPago: m, truth.Asaas: a, truth.Pagarme: p}
}
