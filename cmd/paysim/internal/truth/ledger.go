package truth

import (
	"cmp"
	"slices"

	"github.com/payledger/payledger/domain"
)

// Account is an account of the chart in issue 16, spelled as the ledger's
// read API spells it. paysim keeps its own copy of the chart, normal sides
// included, so that the ledger's is checked against it.
type Account string

// The chart of accounts.
const (
	ProviderBalance Account = "provider_balance"
	Sales           Account = "sales"
	Refunds         Account = "refunds"
	Disputes        Account = "disputes"
	Chargebacks     Account = "chargebacks"
	Fees            Account = "fees"
)

// Chart lists the accounts with their normal side ("debit" or "credit").
func Chart() map[Account]string {
	return map[Account]string{ProviderBalance: "debit", Sales: "credit", Refunds: "debit",
		Disputes: "debit", Chargebacks: "debit", Fees: "debit"}
}

// AccountKey identifies a ledger account: (account, provider, currency).
type AccountKey struct {
	Account  Account
	Provider string
	Currency domain.Currency
}

// String names the account in reports: "fees stripe/USD".
func (k AccountKey) String() string {
	return string(k.Account) + " " + k.Provider + "/" + string(k.Currency)
}

// Books are normal-side balances in minor units per ledger account.
type Books map[AccountKey]int64

// Keys returns the accounts of b sorted by provider, currency and chart order.
func (b Books) Keys() []AccountKey {
	keys := make([]AccountKey, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, CompareKeys)
	return keys
}

// CompareKeys orders accounts by provider, currency, then chart order.
func CompareKeys(a, b AccountKey) int {
	order := []Account{ProviderBalance, Sales, Refunds, Disputes, Chargebacks, Fees}
	return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Currency, b.Currency),
		cmp.Compare(slices.Index(order, a.Account), slices.Index(order, b.Account)))
}

// LedgerOptions say which stated fees the ledger is expected to learn.
type LedgerOptions struct {
	// StripeFees: the ledger fetches Stripe's balance transactions (it has
	// LEDGER_STRIPE_API_KEY and a fee job); without, no Stripe fee is booked.
	StripeFees bool
}

// Ledger is the books every payment's final truth implies, added up per
// account (Book).
func Ledger(payments []*Payment, opt LedgerOptions) Books {
	b := Books{}
	for _, p := range payments {
		b.Book(p, opt)
	}
	return b
}

// Book adds p's final books to b, by the rules of issue 16 applied to
// paysim's own knowledge of the scenario (never the ledger's derivation):
// nothing until money moved (pending, awaiting_confirmation, authorized,
// failed and cancelled payments book nothing, not even a stated fee); sales
// is the capture; refunds what was refunded; an open formal dispute
// withholds what is left of the capture (disputes), a lost one charges it
// back (chargebacks); fees are the stated fee we pay, in its own currency;
// provider_balance is what the provider holds for us after all of them.
func (b Books) Book(p *Payment, opt LedgerOptions) {
	f := p.Final()
	if !MoneyMoved(f.Status) {
		return
	}
	add := func(a Account, cur domain.Currency, v int64) {
		if v != 0 {
			b[AccountKey{a, p.Provider, cur}] += v
		}
	}
	left := f.Amount - f.Refunded
	var disputed, chargedBack int64
	switch f.Status {
	case domain.StatusDisputed:
		disputed = left
	case domain.StatusChargeback:
		chargedBack = left
	}
	add(Sales, f.Currency, f.Amount)
	add(Refunds, f.Currency, f.Refunded)
	add(Disputes, f.Currency, disputed)
	add(Chargebacks, f.Currency, chargedBack)
	add(ProviderBalance, f.Currency, f.Amount-f.Refunded-disputed-chargedBack)
	if fee := p.Fee; fee.Amount != 0 && (p.Provider != Stripe || opt.StripeFees) {
		add(Fees, fee.Currency, fee.Amount)
		add(ProviderBalance, fee.Currency, -fee.Amount)
	}
}

// MoneyMoved reports whether a payment in status s was captured: the
// statuses a capture leads to.
func MoneyMoved(s domain.Status) bool {
	switch s {
	case domain.StatusConfirmed, domain.StatusPartiallyRefunded, domain.StatusRefunded,
		domain.StatusDisputed, domain.StatusChargeback:
		return true
	}
	return false
}
