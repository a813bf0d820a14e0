package gen_test

import (
	"context"
	"maps"
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
	creds := fakeapi.Credentials{StripeAPIKey: "sk_test_paysim", MercadoPagoToken: "APP_USR-paysim", AsaasAPIKey: "$aact_paysim", PagarmeAPIKey: "sk_paysim"}
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
	st, err := stripe.NewStatusClient(stripe.StatusConfig{SecretKey: creds.StripeAPIKey,
		Options: rest.Options{BaseURL: srv.URL + "/stripe"}})
	if err != nil {
		t.Fatal(err)
	}
	fetchers := map[string]statusFetcher{truth.MercadoPago: mp, truth.Stripe: st}
	now := time.Now()
	for _, p := range payments {
		var events, all []domain.Event
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
			if err != nil || len(withoutFees(n.Events)) != 1 {
				t.Fatalf("%s step %d: parse: %v, %d events", p.Key(), k, err, len(n.Events))
			}
			events = append(events, n.Events...)
			all = append([]domain.Event(nil), events...)
			if f := fetchers[p.Provider]; f != nil {
				api.Advance(p, k)
				obs, err := f.FetchStatus(context.Background(), p.ID)
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
		if p.Events > 0 && p.Events != len(withoutFees(events)) {
			t.Errorf("%s: Events = %d, want %d", p.Key(), p.Events, len(withoutFees(events)))
		}
		checkBooks(t, p, all)
	}
}

// statusFetcher is a provider's status client.
type statusFetcher interface {
	FetchStatus(ctx context.Context, id string) (*domain.PaymentStatusObserved, error)
}

// withoutFees drops the fee facts a provider may derive from a webhook, and
// the fee a snapshot states.
func withoutFees(evs []domain.Event) []domain.Event {
	out := make([]domain.Event, 0, len(evs))
	for _, e := range evs {
		switch x := e.(type) {
		case *domain.FeeAssessed:
			continue
		case *domain.PaymentStatusObserved:
			o := *x
			o.Fee, o.FeeCurrency, o.FeeSource = 0, "", ""
			e = &o
		}
		out = append(out, e)
	}
	return out
}

// checkBooks compares the truth's books of p, fees aside (the providers
// that state them are checked end to end), with the domain's books of the
// folded webhooks: two derivations written apart must agree.
func checkBooks(t *testing.T, p *truth.Payment, events []domain.Event) {
	t.Helper()
	want := truth.Books{}
	noFee := *p
	noFee.Fee = truth.Fee{}
	want.Book(&noFee, truth.LedgerOptions{StripeFees: true})
	got := truth.Books{}
	for _, x := range domain.BooksOf(domain.Fold(withoutFees(events)...).State()).Balances() {
		got[truth.AccountKey{Account: truth.Account(x.Account), Provider: p.Provider, Currency: x.Currency}] += x.Amount
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s [%s]: domain books %v, truth %v", p.Key(), p.Lifecycle, got, want)
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

// TestGeneratedBooks: the books of a generated run balance per provider and
// currency, every provider but Pagar.me states fees, some Stripe fees are
// settled in USD for EUR payments, and the Stripe switch drops exactly
// Stripe's fees.
func TestGeneratedBooks(t *testing.T) {
	ps, err := gen.Generate(5, 2000, truth.Providers(), nil)
	if err != nil {
		t.Fatal(err)
	}
	books := truth.Ledger(ps, truth.LedgerOptions{StripeFees: true})
	net := map[string]int64{}
	fees := map[string]int64{}
	for k, v := range books {
		if truth.Chart()[k.Account] == "credit" {
			net[k.Provider+"/"+string(k.Currency)] -= v
		} else {
			net[k.Provider+"/"+string(k.Currency)] += v
		}
		if k.Account == truth.Fees {
			fees[k.Provider+"/"+string(k.Currency)] += v
		}
	}
	for pc, v := range net {
		if v != 0 {
			t.Errorf("%s: books do not balance (%d)", pc, v)
		}
	}
	for _, pc := range []string{"stripe/USD", "stripe/EUR", "mercadopago/BRL", "asaas/BRL"} {
		if fees[pc] <= 0 {
			t.Errorf("no fees in %s: %v", pc, fees)
		}
	}
	if fees["pagarme/BRL"] != 0 {
		t.Error("Pagar.me fees booked")
	}
	var usdFromEUR bool
	for _, p := range ps {
		usdFromEUR = usdFromEUR || (p.Provider == truth.Stripe && p.Final().Currency == "EUR" && p.Fee.Currency == "USD")
		if p.Fee.Amount <= 0 && p.Provider != truth.Pagarme || p.Fee.Amount >= p.Final().Amount {
			t.Errorf("%s: fee %+v of %d", p.Key(), p.Fee, p.Final().Amount)
		}
	}
	if !usdFromEUR {
		t.Error("no EUR payment settled in USD")
	}
	off := truth.Ledger(ps, truth.LedgerOptions{})
	if off[truth.AccountKey{Account: truth.Fees, Provider: truth.Stripe, Currency: "USD"}] != 0 ||
		off[truth.AccountKey{Account: truth.Fees, Provider: truth.Asaas, Currency: "BRL"}] != fees["asaas/BRL"] {
		t.Error("--stripe-fees=false should drop Stripe's fees only")
	}
}
