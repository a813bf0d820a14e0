package stripe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/rest"
)

// resolverFunc is a ChargeResolver made of a function.
type resolverFunc func(ctx context.Context, chargeID string) (string, error)

func (f resolverFunc) PaymentIntentOf(ctx context.Context, chargeID string) (string, error) {
	return f(ctx, chargeID)
}

var _ ChargeResolver = resolverFunc(nil)

// fixtureCharge is Stripe's published charge fixture, trimmed
// (stripe/openapi fixtures3.json resources.charge, provider-apis.md §1.5):
// a Charges API charge, payment_intent null.
const fixtureCharge = `{"id":"ch_1PgafuB7WZ01zgkWXYmPNZs8","object":"charge","amount":100,"amount_captured":0,"amount_refunded":0,` +
	`"balance_transaction":"txn_1PgaxNB7WZ01zgkWEV3TLf40","captured":false,"currency":"usd","disputed":false,` +
	`"paid":true,"payment_intent":null,"refunded":false,"status":"succeeded"}`

// fixtureDispute is the published dispute fixture on that charge
// (fixtures3.json resources.dispute, provider-apis.md §1.5).
const fixtureDispute = `{"id":"dp_1Pgc71B7WZ01zgkWMevJiAUx","object":"dispute","amount":1000,"balance_transactions":[],` +
	`"charge":"ch_1PgafuB7WZ01zgkWXYmPNZs8","currency":"usd","payment_intent":null,"reason":"general",` +
	`"status":"warning_needs_response"}`

const legacyCharge, legacyDisputeCharge = "ch_17Qw5d2eZvKYlo2CzXy9AbCd", "ch_1CqD1rPuTeLeGaCyPqRsTuVw"

func TestPaymentIntentOf(t *testing.T) {
	tests := []struct {
		name      string
		charge    string
		answers   []answer
		wantPI    string
		wantKind  domain.Kind // of the error; 0 with wantErr false
		wantErr   bool
		wantCalls int // after two lookups
	}{
		{name: "charge of a PaymentIntent, cached", charge: "ch_3QxStatus",
			answers: []answer{{status: 200, body: chargeJSON(2000, 0, false, false)}}, wantPI: testPI, wantCalls: 1},
		{name: "expanded payment_intent", charge: "ch_3QxStatus",
			answers: []answer{{status: 200, body: `{"id":"ch_3QxStatus","payment_intent":{"id":"pi_exp","object":"payment_intent"}}`}},
			wantPI:  "pi_exp", wantCalls: 1},
		{name: "published fixture: no PaymentIntent, cached too", charge: "ch_1PgafuB7WZ01zgkWXYmPNZs8",
			answers: []answer{{status: 200, body: fixtureCharge}}, wantPI: "", wantCalls: 1},
		{name: "unknown charge is not cached", charge: "ch_gone", wantErr: true, wantKind: domain.KindNotFound, wantCalls: 2},
		{name: "5xx until the attempts run out", charge: "ch_down", answers: []answer{{status: 503, body: "down"}},
			wantErr: true, wantKind: domain.KindUnavailable, wantCalls: 4},
		{name: "answer about another charge", charge: "ch_asked",
			answers: []answer{{status: 200, body: `{"id":"ch_other","payment_intent":"pi_1"}`}},
			wantErr: true, wantKind: domain.KindInvalid, wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t)
			if tt.answers != nil {
				api.on("/v1/charges/"+tt.charge, tt.answers...)
			}
			c := api.client(t)
			for range 2 {
				pi, err := c.PaymentIntentOf(t.Context(), tt.charge)
				if tt.wantErr {
					if err == nil || domain.KindOf(err) != tt.wantKind {
						t.Fatalf("PaymentIntentOf = %q, %v; want a %v error", pi, err, tt.wantKind)
					}
					continue
				}
				if err != nil || pi != tt.wantPI {
					t.Fatalf("PaymentIntentOf = %q, %v; want %q", pi, err, tt.wantPI)
				}
			}
			if got := api.count("/v1/charges/" + tt.charge); got != tt.wantCalls {
				t.Errorf("%d calls, want %d", got, tt.wantCalls)
			}
		})
	}
}

func TestChargeCacheEvictsOldest(t *testing.T) {
	c := newChargeCache(2)
	c.put("ch_1", "pi_1")
	c.put("ch_2", "")
	c.put("ch_1", "pi_changed") // already known: a charge's PaymentIntent never changes
	c.put("ch_3", "pi_3")
	for _, tt := range []struct {
		ch, pi string
		ok     bool
	}{{"ch_1", "", false}, {"ch_2", "", true}, {"ch_3", "pi_3", true}} {
		if pi, ok := c.get(tt.ch); pi != tt.pi || ok != tt.ok {
			t.Errorf("get(%s) = %q, %v; want %q, %v", tt.ch, pi, ok, tt.pi, tt.ok)
		}
	}
	if len(c.pis) != 2 || len(c.order) != 2 {
		t.Errorf("cache holds %d entries, %d keys; want 2", len(c.pis), len(c.order))
	}
}

// TestParseChargeOnly maps the old-version events that name only a charge
// through a resolver: found, legacy, unknown, failing, and no resolver.
func TestParseChargeOnly(t *testing.T) {
	refund, err := os.ReadFile("testdata/events/charge.refunded.legacy_charges_api.json")
	if err != nil {
		t.Fatal(err)
	}
	dispute, err := os.ReadFile("testdata/events/charge.dispute.created.legacy_charges_api.json")
	if err != nil {
		t.Fatal(err)
	}
	fixture := []byte(evt("charge.dispute.created", fixtureDispute))
	found := resolverFunc(func(_ context.Context, ch string) (string, error) { return "pi_of_" + ch, nil })
	down := resolverFunc(func(context.Context, string) (string, error) {
		return "", &rest.Error{Provider: "stripe", PaymentID: "ch", Status: 503, Attempts: 4, Err: domain.Unavailable("rest", "down", nil)}
	})
	badKey := resolverFunc(func(context.Context, string) (string, error) {
		return "", &rest.Error{Provider: "stripe", Status: 401, Attempts: 1, Err: &domain.Error{Kind: domain.KindUnauthorized, Msg: "Unauthorized"}}
	})
	unknown := resolverFunc(func(context.Context, string) (string, error) {
		return "", fmt.Errorf("x: %w", domain.ErrUnknownPayment)
	})
	none := resolverFunc(func(context.Context, string) (string, error) { return "", nil })
	tests := []struct {
		name        string
		resolver    ChargeResolver
		body        []byte
		want        domain.Event
		wantIgnored string
		wantKind    domain.Kind
	}{
		{name: "refund resolved", resolver: found, body: refund, want: &domain.PaymentRefunded{
			Meta:           meta("evt_17Qw5e2eZvKYlo2CnT8hUiJk", "charge.refunded", "pi_of_"+legacyCharge, 1452000000),
			AmountRefunded: 1200, AmountCaptured: 1200, Currency: "USD"}},
		{name: "dispute resolved through its charge", resolver: found, body: dispute, want: &domain.DisputeOpened{
			Meta:      meta("evt_1CqD1sPuTeLeGaCy0aBcDeFg", "charge.dispute.created", "pi_of_"+legacyDisputeCharge, 1532000000),
			DisputeID: "dp_1CqD1sPuTeLeGaCyHiJkLmNo", Amount: 800, Currency: "USD", Reason: "product_not_received"}},
		{name: "published dispute fixture resolved", resolver: found, body: fixture, want: &domain.InquiryOpened{
			Meta:      meta("evt_1", "charge.dispute.created", "pi_of_ch_1PgafuB7WZ01zgkWXYmPNZs8", 1700000000),
			DisputeID: "dp_1Pgc71B7WZ01zgkWMevJiAUx", Amount: 1000, Currency: "USD", Reason: "general"}},
		{name: "no resolver: the API key is needed", body: dispute, wantIgnored: "needs a Stripe API key (LEDGER_STRIPE_API_KEY)"},
		{name: "no resolver, refund", body: refund, wantIgnored: "charge " + legacyCharge + " has no payment_intent"},
		{name: "true legacy charge", resolver: none, body: refund, wantIgnored: "legacy Charges API: charge " + legacyCharge + " has none"},
		{name: "unknown charge", resolver: unknown, body: dispute, wantIgnored: "Stripe does not know its charge " + legacyDisputeCharge},
		{name: "dispute naming no charge", resolver: found, body: []byte(evt("charge.dispute.closed", `{"id":"dp_1","amount":1,"currency":"usd","status":"lost"}`)),
			wantIgnored: "names no charge"},
		{name: "lookup down: not acknowledged", resolver: down, body: refund, wantKind: domain.KindUnavailable},
		{name: "lookup refused: not acknowledged either", resolver: badKey, body: dispute, wantKind: domain.KindUnavailable},
		{name: "charge ID unusable", resolver: found, body: []byte(evt("charge.dispute.created", `{"id":"dp_1","charge":"ch 1","amount":1,"currency":"usd"}`)),
			wantKind: domain.KindInvalid},
		{name: "resolved ID unusable", resolver: resolverFunc(func(context.Context, string) (string, error) { return "pi\n1", nil }),
			body: refund, wantKind: domain.KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, Config{Secrets: []string{vectorSecret}, Resolver: tt.resolver})
			n, err := p.Parse(t.Context(), nil, nil, tt.body)
			switch {
			case tt.wantKind != 0:
				if domain.KindOf(err) != tt.wantKind || domain.MessageOf(err) == "" {
					t.Fatalf("Parse = %+v, %v; want a %v error with a message", n, err, tt.wantKind)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tt.want == nil:
				if len(n.Events) != 0 || !strings.Contains(n.IgnoredReason, tt.wantIgnored) {
					t.Fatalf("Parse = %+v; want ignored with %q", n, tt.wantIgnored)
				}
				return
			}
			if len(n.Events) != 1 || !reflect.DeepEqual(n.Events[0], tt.want) {
				t.Fatalf("Parse events %+v; want %+v", n.Events, tt.want)
			}
		})
	}
}

// TestParseResolvesThroughTheAPI runs the webhook path against the fake API:
// a redelivery is answered from the cache, and a failing API is a 503-kind
// error, so Stripe retries.
func TestParseResolvesThroughTheAPI(t *testing.T) {
	body, err := os.ReadFile("testdata/events/charge.dispute.created.legacy_charges_api.json")
	if err != nil {
		t.Fatal(err)
	}
	api := newFakeAPI(t)
	api.on("/v1/charges/"+legacyDisputeCharge, answer{status: 200, body: `{"id":"` + legacyDisputeCharge + `","payment_intent":"pi_1CqD1r"}`})
	p := newProvider(t, Config{Secrets: []string{vectorSecret}, Resolver: api.client(t)})
	for range 2 {
		n, err := p.Parse(t.Context(), nil, nil, body)
		if err != nil || len(n.Events) != 1 || n.Events[0].EventMeta().ProviderPaymentID != "pi_1CqD1r" {
			t.Fatalf("Parse = %+v, %v; want the dispute on pi_1CqD1r", n, err)
		}
	}
	if got := api.count("/v1/charges/" + legacyDisputeCharge); got != 1 {
		t.Errorf("%d lookups for two deliveries, want 1 (cached)", got)
	}

	down := newFakeAPI(t)
	down.on("/v1/charges/"+legacyDisputeCharge, answer{status: 500, body: "oops"})
	p = newProvider(t, Config{Secrets: []string{vectorSecret}, Resolver: down.client(t)})
	_, err = p.Parse(t.Context(), nil, nil, body)
	var re *rest.Error
	if domain.KindOf(err) != domain.KindUnavailable || !errors.As(err, &re) || re.Status != 500 {
		t.Fatalf("Parse with the API down = %v; want KindUnavailable wrapping the HTTP 500", err)
	}
}
