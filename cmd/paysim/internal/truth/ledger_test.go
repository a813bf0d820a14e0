package truth

import (
	"maps"
	"testing"

	"github.com/payledger/payledger/domain"
)

// payment is a payment whose last step has the final truth st.
func payment(provider string, st State, fee Fee) *Payment {
	return &Payment{Provider: provider, ID: "x", Steps: []Step{{Truth: st}}, Fee: fee}
}

func TestBook(t *testing.T) {
	brl := func(v int64) Fee { return Fee{Amount: v, Currency: "BRL"} }
	k := func(a Account, provider string, cur domain.Currency) AccountKey { return AccountKey{a, provider, cur} }
	tests := []struct {
		name string
		p    *Payment
		opt  LedgerOptions
		want Books
	}{
		{"partial refund and a fee: 100.00 captured, 30.00 refunded, 4.99 fee",
			payment(Asaas, State{domain.StatusPartiallyRefunded, 10000, 3000, "BRL"}, brl(499)), LedgerOptions{},
			Books{k(Sales, Asaas, "BRL"): 10000, k(Refunds, Asaas, "BRL"): 3000, k(Fees, Asaas, "BRL"): 499,
				k(ProviderBalance, Asaas, "BRL"): 10000 - 3000 - 499}},
		{"open dispute withholds what is left",
			payment(Stripe, State{domain.StatusDisputed, 5000, 0, "USD"}, Fee{175, "USD"}), LedgerOptions{StripeFees: true},
			Books{k(Sales, Stripe, "USD"): 5000, k(Disputes, Stripe, "USD"): 5000, k(Fees, Stripe, "USD"): 175,
				k(ProviderBalance, Stripe, "USD"): -175}},
		{"dispute won: as if never disputed",
			payment(Stripe, State{domain.StatusConfirmed, 5000, 0, "USD"}, Fee{175, "USD"}), LedgerOptions{StripeFees: true},
			Books{k(Sales, Stripe, "USD"): 5000, k(Fees, Stripe, "USD"): 175, k(ProviderBalance, Stripe, "USD"): 4825}},
		{"dispute lost: charged back, the fee stays",
			payment(MercadoPago, State{domain.StatusChargeback, 5000, 0, "BRL"}, brl(250)), LedgerOptions{},
			Books{k(Sales, MercadoPago, "BRL"): 5000, k(Chargebacks, MercadoPago, "BRL"): 5000,
				k(Fees, MercadoPago, "BRL"): 250, k(ProviderBalance, MercadoPago, "BRL"): -250}},
		{"failed payment with a stated fee posts nothing",
			payment(Asaas, State{domain.StatusFailed, 5000, 0, "BRL"}, brl(99)), LedgerOptions{}, Books{}},
		{"cancelled, pending and authorized post nothing",
			payment(Pagarme, State{domain.StatusCancelled, 5000, 0, "BRL"}, Fee{}), LedgerOptions{}, Books{}},
		{"authorized posts nothing", payment(Stripe, State{domain.StatusAuthorized, 5000, 0, "EUR"}, Fee{99, "EUR"}),
			LedgerOptions{StripeFees: true}, Books{}},
		{"a Stripe fee settled in another currency is booked in it",
			payment(Stripe, State{domain.StatusRefunded, 1000, 1000, "EUR"}, Fee{61, "USD"}), LedgerOptions{StripeFees: true},
			Books{k(Sales, Stripe, "EUR"): 1000, k(Refunds, Stripe, "EUR"): 1000, k(Fees, Stripe, "USD"): 61,
				k(ProviderBalance, Stripe, "USD"): -61}},
		{"Stripe fees not expected",
			payment(Stripe, State{domain.StatusConfirmed, 1000, 0, "USD"}, Fee{59, "USD"}), LedgerOptions{},
			Books{k(Sales, Stripe, "USD"): 1000, k(ProviderBalance, Stripe, "USD"): 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Books{}
			got.Book(tt.p, tt.opt)
			if !maps.Equal(got, tt.want) {
				t.Errorf("books %v, want %v", got, tt.want)
			}
			checkBalanced(t, got)
		})
	}
}

// checkBalanced: per provider and currency, debit-normal balances equal
// credit-normal ones, as any sum of balanced entries must.
func checkBalanced(t *testing.T, b Books) {
	t.Helper()
	net := map[[2]string]int64{}
	for k, v := range b {
		if Chart()[k.Account] == "credit" {
			v = -v
		}
		net[[2]string{k.Provider, string(k.Currency)}] += v
	}
	for pc, v := range net {
		if v != 0 {
			t.Errorf("%s/%s: debit-normal minus credit-normal balances = %d, want 0", pc[0], pc[1], v)
		}
	}
}

func TestLedgerAddsUpPerAccount(t *testing.T) {
	ps := []*Payment{
		payment(Asaas, State{domain.StatusConfirmed, 10000, 0, "BRL"}, Fee{199, "BRL"}),
		payment(Asaas, State{domain.StatusRefunded, 2000, 2000, "BRL"}, Fee{99, "BRL"}),
		payment(Asaas, State{domain.StatusCancelled, 7000, 0, "BRL"}, Fee{99, "BRL"}),
		payment(Pagarme, State{domain.StatusConfirmed, 300, 0, "BRL"}, Fee{}),
	}
	want := Books{
		{Sales, Asaas, "BRL"}: 12000, {Refunds, Asaas, "BRL"}: 2000, {Fees, Asaas, "BRL"}: 298,
		{ProviderBalance, Asaas, "BRL"}: 12000 - 2000 - 298,
		{Sales, Pagarme, "BRL"}:         300, {ProviderBalance, Pagarme, "BRL"}: 300,
	}
	got := Ledger(ps, LedgerOptions{})
	if !maps.Equal(got, want) {
		t.Errorf("ledger %v, want %v", got, want)
	}
	keys := got.Keys()
	if keys[0] != (AccountKey{ProviderBalance, Asaas, "BRL"}) || keys[len(keys)-1] != (AccountKey{Sales, Pagarme, "BRL"}) {
		t.Errorf("keys not in provider, currency, chart order: %v", keys)
	}
	if s := (AccountKey{Fees, Stripe, "USD"}).String(); s != "fees stripe/USD" {
		t.Errorf("String = %q", s)
	}
}
