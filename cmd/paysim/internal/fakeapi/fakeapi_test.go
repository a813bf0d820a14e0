package fakeapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payledger/payledger/cmd/paysim/internal/fakeapi"
	"github.com/payledger/payledger/cmd/paysim/internal/gen"
	"github.com/payledger/payledger/cmd/paysim/internal/sign"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

var creds = fakeapi.Credentials{StripeAPIKey: "sk_test_x", MercadoPagoToken: "APP_USR-x", AsaasAPIKey: "$aact_x", PagarmeAPIKey: "sk_x"}

// serve returns the fake APIs of 400 generated payments, every one shown
// at its last step.
func serve(t *testing.T) (*httptest.Server, []*truth.Payment) {
	t.Helper()
	ps, err := gen.Generate(11, 400, truth.Providers(), nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := sign.LoadKey("")
	api, err := fakeapi.New(creds, "kid", &key.PublicKey, ps)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		api.Advance(p, len(p.Steps)-1)
	}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return srv, ps
}

func get(t *testing.T, url, header, value string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set(header, value)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s: %v in %s", url, err, raw)
		}
	}
	return resp.StatusCode
}

// find returns the first payment of provider in lifecycle one of lcs.
func find(t *testing.T, ps []*truth.Payment, provider string, ok func(*truth.Payment) bool) *truth.Payment {
	t.Helper()
	for _, p := range ps {
		if p.Provider == provider && ok(p) {
			return p
		}
	}
	t.Fatalf("no %s payment as wanted", provider)
	return nil
}

type intent struct {
	ID           string          `json:"id"`
	Status       string          `json:"status"`
	LatestCharge json.RawMessage `json:"latest_charge"`
}

type charge struct {
	ID                 string          `json:"id"`
	BalanceTransaction json.RawMessage `json:"balance_transaction"`
}

type balanceTransaction struct {
	ID         string `json:"id"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	Fee        int64  `json:"fee"`
	Net        int64  `json:"net"`
	FeeDetails []struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
		Type     string `json:"type"`
	} `json:"fee_details"`
}

// TestStripeBalanceTransaction: the fee is in the charge's balance
// transaction when expanded (fee = Σ fee_details, net = amount − fee, in
// the settlement currency the truth books it in); an ID when only the
// charge is expanded; null on the first expanded fetch of a FeeLate payment.
func TestStripeBalanceTransaction(t *testing.T) {
	srv, ps := serve(t)
	auth := "Bearer " + creds.StripeAPIKey
	for _, late := range []bool{false, true} {
		p := find(t, ps, truth.Stripe, func(p *truth.Payment) bool { return p.Lifecycle == "refund_partial" && p.FeeLate == late })
		url := srv.URL + "/stripe/v1/payment_intents/" + p.ID + "?expand[]=latest_charge.balance_transaction"
		var pi intent
		var ch charge
		if late {
			if get(t, url, "Authorization", auth, &pi) != 200 || json.Unmarshal(pi.LatestCharge, &ch) != nil || string(ch.BalanceTransaction) != "null" {
				t.Fatalf("late: first fetch %s", pi.LatestCharge)
			}
		}
		get(t, url, "Authorization", auth, &pi)
		var bt balanceTransaction
		if err := json.Unmarshal(pi.LatestCharge, &ch); err != nil || json.Unmarshal(ch.BalanceTransaction, &bt) != nil {
			t.Fatalf("no balance transaction in %s", pi.LatestCharge)
		}
		if !strings.HasPrefix(bt.ID, "txn_") || bt.Fee != p.Fee.Amount || strings.ToUpper(bt.Currency) != string(p.Fee.Currency) ||
			bt.Net != bt.Amount-bt.Fee || len(bt.FeeDetails) != 1 || bt.FeeDetails[0].Amount != bt.Fee || bt.FeeDetails[0].Type != "stripe_fee" {
			t.Errorf("balance transaction %+v, fee %+v", bt, p.Fee)
		}
		get(t, srv.URL+"/stripe/v1/payment_intents/"+p.ID+"?expand[]=latest_charge", "Authorization", auth, &pi)
		if json.Unmarshal(pi.LatestCharge, &ch) != nil || string(ch.BalanceTransaction) != `"`+bt.ID+`"` {
			t.Errorf("charge expanded alone: balance_transaction %s", ch.BalanceTransaction)
		}
		get(t, srv.URL+"/stripe/v1/payment_intents/"+p.ID, "Authorization", auth, &pi)
		if string(pi.LatestCharge) != `"`+ch.ID+`"` {
			t.Errorf("nothing expanded: latest_charge %s", pi.LatestCharge)
		}
	}
	p := find(t, ps, truth.Stripe, func(p *truth.Payment) bool { return p.Lifecycle == "canceled" })
	var pi intent
	get(t, srv.URL+"/stripe/v1/payment_intents/"+p.ID+"?expand[]=latest_charge.balance_transaction", "Authorization", auth, &pi)
	if pi.Status != "canceled" || string(pi.LatestCharge) != "null" {
		t.Errorf("canceled intent: %+v", pi)
	}
	if code := get(t, srv.URL+"/stripe/v1/payment_intents/"+p.ID, "Authorization", "Bearer sk_wrong", nil); code != 401 {
		t.Errorf("wrong key: %d", code)
	}
	if code := get(t, srv.URL+"/stripe/v1/payment_intents/pi_unknown", "Authorization", auth, nil); code != 404 {
		t.Errorf("unknown intent: %d", code)
	}
}

func TestStripeDisputes(t *testing.T) {
	srv, ps := serve(t)
	for lc, want := range map[string]string{"dispute_lost": "lost", "dispute_won": "won", "dispute_open": "needs_response", "succeeded": ""} {
		p := find(t, ps, truth.Stripe, func(p *truth.Payment) bool { return p.Lifecycle == lc })
		var list struct {
			Data []struct {
				Status string `json:"status"`
			} `json:"data"`
		}
		get(t, srv.URL+"/stripe/v1/disputes?payment_intent="+p.ID+"&limit=1", "Authorization", "Bearer "+creds.StripeAPIKey, &list)
		got := ""
		if len(list.Data) > 0 {
			got = list.Data[0].Status
		}
		if got != want || list.Data == nil {
			t.Errorf("%s: dispute %q (%v), want %q", lc, got, list.Data, want)
		}
	}
}

// TestMercadoPagoFees: fee_details carry the collector fee the truth books
// and, for some payments, a payer fee that must not count; net is amount −
// collector fee; before approval both are empty.
func TestMercadoPagoFees(t *testing.T) {
	srv, ps := serve(t)
	type mpPayment struct {
		Amount     json.Number `json:"transaction_amount"`
		FeeDetails []struct {
			Amount   json.Number `json:"amount"`
			FeePayer string      `json:"fee_payer"`
			Type     string      `json:"type"`
		} `json:"fee_details"`
		Details struct {
			Net json.Number `json:"net_received_amount"`
		} `json:"transaction_details"`
	}
	payer := 0
	for _, p := range ps {
		if p.Provider != truth.MercadoPago || p.Lifecycle != "approved" {
			continue
		}
		var mp mpPayment
		get(t, srv.URL+"/mercadopago/v1/payments/"+p.ID, "Authorization", "Bearer "+creds.MercadoPagoToken, &mp)
		if len(mp.FeeDetails) == 0 || mp.FeeDetails[0].FeePayer != "collector" || mp.FeeDetails[0].Type != "mercadopago_fee" ||
			minor(t, mp.FeeDetails[0].Amount) != p.Fee.Amount || minor(t, mp.Details.Net) != minor(t, mp.Amount)-p.Fee.Amount {
			t.Errorf("%s: %+v, fee %+v", p.Key(), mp, p.Fee)
		}
		if len(mp.FeeDetails) == 2 && mp.FeeDetails[1].FeePayer == "payer" {
			payer++
		}
	}
	if payer == 0 {
		t.Error("no payment with a payer fee")
	}
	rejected := find(t, ps, truth.MercadoPago, func(p *truth.Payment) bool { return p.Lifecycle == "rejected" })
	var mp mpPayment
	get(t, srv.URL+"/mercadopago/v1/payments/"+rejected.ID, "Authorization", "Bearer "+creds.MercadoPagoToken, &mp)
	if mp.FeeDetails == nil || len(mp.FeeDetails) != 0 || mp.Details.Net.String() != "0" {
		t.Errorf("rejected: %+v", mp)
	}
}

// TestAsaasNetValue: every Asaas payment object states value − netValue =
// the truth's fee, a payment never paid included.
func TestAsaasNetValue(t *testing.T) {
	srv, ps := serve(t)
	for _, lc := range []string{"pix_received", "boleto_paid_late", "chargeback", "deleted"} {
		p := find(t, ps, truth.Asaas, func(p *truth.Payment) bool { return p.Lifecycle == lc })
		var a struct {
			Value    json.Number `json:"value"`
			NetValue json.Number `json:"netValue"`
		}
		get(t, srv.URL+"/asaas/v3/payments/"+p.ID, "access_token", creds.AsaasAPIKey, &a)
		if fee := minor(t, a.Value) - minor(t, a.NetValue); fee != p.Fee.Amount || fee <= 0 {
			t.Errorf("%s: value %s, netValue %s, fee %+v", lc, a.Value, a.NetValue, p.Fee)
		}
	}
}

// minor parses a decimal with at most two places exactly.
func minor(t *testing.T, n json.Number) int64 {
	t.Helper()
	whole, frac, _ := strings.Cut(n.String(), ".")
	if len(frac) > 2 {
		t.Fatalf("%s: more than two decimals", n)
	}
	frac += strings.Repeat("0", 2-len(frac))
	var w, f int64
	for _, c := range whole {
		w = w*10 + int64(c-'0')
	}
	for _, c := range frac {
		f = f*10 + int64(c-'0')
	}
	return w*100 + f
}
