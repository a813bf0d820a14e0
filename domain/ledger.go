package domain

import (
	"cmp"
	"slices"
	"time"
)

// Account is an account of the chart (ARCHITECTURE.md, "The books"). A ledger
// account is identified by (Account, provider, currency).
type Account string

// The chart of accounts.
const (
	AccountProviderBalance Account = "provider_balance" // money the provider holds for us
	AccountSales           Account = "sales"            // gross captured amounts
	AccountRefunds         Account = "refunds"          // refunded amounts
	AccountDisputes        Account = "disputes"         // withheld for an open dispute
	AccountChargebacks     Account = "chargebacks"      // disputes lost
	AccountFees            Account = "fees"             // provider fees
)

// Accounts lists the chart in its display order.
func Accounts() []Account {
	return []Account{AccountProviderBalance, AccountSales, AccountRefunds, AccountDisputes,
		AccountChargebacks, AccountFees}
}

// Valid reports whether a is an account of the chart.
func (a Account) Valid() bool { return slices.Contains(Accounts(), a) }

// Side is a side of a journal line.
type Side string

// The two sides.
const (
	Debit  Side = "debit"
	Credit Side = "credit"
)

// Normal returns the side on which the account's balance is positive: sales
// is credit-normal, every other account debit-normal.
func (a Account) Normal() Side {
	if a == AccountSales {
		return Credit
	}
	return Debit
}

// NormalBalance is the balance of debits and credits on a's normal side.
func (a Account) NormalBalance(debits, credits int64) int64 {
	if a.Normal() == Credit {
		return credits - debits
	}
	return debits - credits
}

// Line is one line of a journal entry: exactly one of Debit and Credit is
// positive.
type Line struct {
	Account Account
	Debit   int64
	Credit  int64
}

// Books is what a payment's state means for the books: the normal-side
// balance of every account, in minor units. Fees are in FeeCurrency, every
// other account in Currency.
type Books struct {
	Currency    Currency
	Sales       int64
	Refunds     int64
	Disputes    int64
	Chargebacks int64
	FeeCurrency Currency
	Fees        int64
}

// BooksOf maps a payment's state to its books. Nothing is booked until money
// moved (a pending, awaiting_confirmation, authorized, failed or cancelled
// payment books nothing, fee included); a dispute whose amount no fact
// stated withholds what is left of the capture.
func BooksOf(s PaymentState) Books {
	b := Books{Currency: s.Currency}
	switch s.Status {
	case StatusConfirmed, StatusPartiallyRefunded, StatusRefunded, StatusDisputed, StatusChargeback:
	default:
		return b
	}
	b.Sales = s.AmountCaptured
	b.Refunds = s.AmountRefunded
	disputed := s.AmountDisputed
	if disputed == 0 {
		disputed = max(b.Sales-b.Refunds, 0)
	}
	switch s.Status {
	case StatusDisputed:
		b.Disputes = disputed
	case StatusChargeback:
		b.Chargebacks = disputed
	}
	if s.FeeCurrency != "" {
		b.FeeCurrency, b.Fees = s.FeeCurrency, s.Fee
	}
	return b
}

// Balance is the normal-side balance of one account in one currency.
type Balance struct {
	Account  Account
	Currency Currency
	Amount   int64
}

// Balances returns the books as account balances, without zeros, ordered
// by currency then chart order. provider_balance is what the other accounts
// leave, so the balances of each currency net to zero (debit-normal minus
// credit-normal): any change of the books is a balanced entry.
func (b Books) Balances() []Balance {
	var out []Balance
	for _, p := range []part{b.moneyPart(), b.feePart()} {
		for i := range p.n {
			k := slices.IndexFunc(out, func(y Balance) bool { return y.Account == p.accounts[i] && y.Currency == p.currency })
			if k < 0 {
				out = append(out, Balance{Account: p.accounts[i], Currency: p.currency, Amount: p.amounts[i]})
				continue
			}
			out[k].Amount += p.amounts[i]
		}
	}
	out = slices.DeleteFunc(out, func(x Balance) bool { return x.Amount == 0 })
	slices.SortStableFunc(out, compareBalances)
	return out
}

func compareBalances(a, b Balance) int {
	if c := cmp.Compare(a.Currency, b.Currency); c != 0 {
		return c
	}
	return cmp.Compare(a.Account.index(), b.Account.index())
}

// index is a's place in the chart, without Accounts' allocation.
func (a Account) index() int {
	switch a {
	case AccountProviderBalance:
		return 0
	case AccountSales:
		return 1
	case AccountRefunds:
		return 2
	case AccountDisputes:
		return 3
	case AccountChargebacks:
		return 4
	case AccountFees:
		return 5
	}
	return 6
}

// Posting is the change of the books that one fact causes in one currency, at
// its place in the fold: the journal entry that fact implies as history folds
// now.
type Posting struct {
	FactKey     string // Meta.Key of the causing fact
	Rank        int    // Rank of the causing fact: with EffectiveAt and FactKey, its fold position
	EffectiveAt time.Time
	Currency    Currency
	Lines       []Line // in chart order; debits and credits sum to the same amount
}

// Postings derives the payment's journal as its facts fold now: for each fact
// in fold order, the change of the books from the state before it to the
// state after it, one posting per currency that changed. A change of the fee
// is posted apart, as the fee fact's (a FeeAssessed, or a snapshot stating
// the fee, whose fee posting follows its money posting): a fee stated before the capture is
// booked when the capture is (the later of the two times), caused by the fee
// fact, and learning a fee late never reverses the capture's entry.
func (p Payment) Postings() []Posting { return postingsOf(p.facts) }

// postingsOf is Postings of facts sorted and deduplicated as Fold does.
func postingsOf(facts []Event) []Posting {
	var (
		out         []Posting
		f           folder
		money, fees part
		feeKey      string // the fact that stated the fee in force, and its rank
		feeRank     int
	)
	for _, e := range facts {
		f.apply(e)
		if statesFee(e) {
			feeKey, feeRank = e.EventMeta().Key(), Rank(e)
		}
		b := BooksOf(f.s)
		m := e.EventMeta()
		bm, bf := b.moneyPart(), b.feePart()
		out = appendPostings(out, money, bm, m.Key(), Rank(e), m.OccurredAt)
		out = appendPostings(out, fees, bf, feeKey, feeRank, m.OccurredAt)
		money, fees = bm, bf
	}
	return out
}

// statesFee reports whether e states the payment's fee: a FeeAssessed, or a
// snapshot that carries one.
func statesFee(e Event) bool {
	switch x := e.(type) {
	case *FeeAssessed:
		return true
	case *PaymentStatusObserved:
		return x.StatesFee()
	}
	return false
}

// part is the money or the fee half of a payment's books: the normal-side
// balances of its accounts (in chart order) in one currency. A fixed-size
// value, because the projector derives it for every prefix of every
// payment's facts.
type part struct {
	currency Currency
	n        int
	accounts [5]Account
	amounts  [5]int64
}

func (b Books) moneyPart() part {
	return part{currency: b.Currency, n: 5,
		accounts: [5]Account{AccountProviderBalance, AccountSales, AccountRefunds, AccountDisputes, AccountChargebacks},
		amounts:  [5]int64{b.Sales - b.Refunds - b.Disputes - b.Chargebacks, b.Sales, b.Refunds, b.Disputes, b.Chargebacks}}
}

func (b Books) feePart() part {
	return part{currency: b.FeeCurrency, n: 2, accounts: [5]Account{AccountProviderBalance, AccountFees},
		amounts: [5]int64{-b.Fees, b.Fees}}
}

func (p part) zero() bool { return p.amounts == [5]int64{} }

// appendPostings appends the postings that take before to after: one in
// their currency, or, when the currency changed (a fee restated in another
// one), one undoing before and one booking after, in currency order.
func appendPostings(out []Posting, before, after part, key string, rank int, at time.Time) []Posting {
	add := func(c Currency, from, to part) {
		if lines := diffLines(from, to); len(lines) > 0 {
			out = append(out, Posting{FactKey: key, Rank: rank, EffectiveAt: at, Currency: c, Lines: lines})
		}
	}
	switch {
	case after.zero() && !before.zero():
		add(before.currency, before, after)
	case before.currency == after.currency || before.zero():
		add(after.currency, before, after)
	default:
		none := part{n: before.n, accounts: before.accounts}
		first, second := func() { add(before.currency, before, none) }, func() { add(after.currency, none, after) }
		if after.currency < before.currency {
			first, second = second, first
		}
		first()
		second()
	}
	return out
}

// diffLines returns the lines that take the part's balances from before to
// after, in chart order.
func diffLines(before, after part) []Line {
	var lines []Line
	for i := range after.n {
		d := after.amounts[i] - before.amounts[i]
		if d == 0 {
			continue
		}
		a := after.accounts[i]
		if a.Normal() == Credit {
			d = -d // a credit-normal balance grows by credits
		}
		if lines == nil {
			lines = make([]Line, 0, after.n)
		}
		if d > 0 {
			lines = append(lines, Line{Account: a, Debit: d})
		} else {
			lines = append(lines, Line{Account: a, Credit: -d})
		}
	}
	return lines
}

// Arrival is a fact as the event store recorded it. Journal takes a payment's
// arrivals in store order (the stream's revisions).
type Arrival struct {
	Event      Event
	EventID    string    // the store's event ID
	RecordedAt time.Time // the store's recorded time
}

// JournalEntry is a stored journal entry: posted when an arrival made it
// hold, reversed (by another entry) when a later arrival made it stop holding.
type JournalEntry struct {
	// Arrival is the index of the arrival that posted the entry and Seq its
	// place among that arrival's entries: with the arrival's event ID they
	// name the entry, the same way on every rebuild.
	Arrival int
	Seq     int
	// CauseEventID is the store's event ID of the fact the entry is the
	// posting of, or for a reversal, of the arrival that undid the entry.
	CauseEventID string
	// FactKey and Rank place the entry's fact in fold order (for a
	// reversal, the reversed entry's).
	FactKey     string
	Rank        int
	EffectiveAt time.Time
	RecordedAt  time.Time // the recorded time of arrival Arrival
	Currency    Currency
	// Reverses is the index (in the returned journal) of the entry this one
	// reverses, or -1.
	Reverses int
	Lines    []Line
}

// Journal derives a payment's stored journal from its arrivals, one arrival
// at a time, as the projection posts it: after each arrival, every stored
// entry that no longer holds (its fact's posting changed, or is gone) is
// reversed, effective when it was, and every posting not yet stored is
// posted, both recorded at the arrival. Nothing is ever edited, so the sum of
// the entries with EffectiveAt ≤ T is the books for T as known now, and the
// sum of those with RecordedAt ≤ T the books as known at T. It is a pure
// function of the arrivals: a rebuild derives the same journal.
func Journal(arrivals []Arrival) []JournalEntry {
	var (
		out     []JournalEntry
		live    []int                 // indexes into out of the entries not reversed
		sorted  []Event               // the arrivals so far in fold order, repeats included
		eventID = map[string]string{} // fact key → event ID of its first arrival
	)
	for j, a := range arrivals {
		if a.Event == nil {
			continue
		}
		k := a.Event.EventMeta().Key()
		if _, ok := eventID[k]; !ok {
			eventID[k] = a.EventID
		}
		var repeat bool
		if sorted, repeat = insertSorted(sorted, a.Event); repeat {
			continue // the fold, and so every posting, is unchanged
		}
		ideal := postingsOf(dedup(sorted))
		held := make([]bool, len(ideal))
		seq := 0
		kept := live[:0:0]
		for _, i := range live {
			if m := matchPosting(out[i], ideal, held); m >= 0 {
				held[m] = true
				kept = append(kept, i)
				continue
			}
			out = append(out, reversal(out[i], i, j, seq, a))
			seq++
		}
		for m, p := range ideal {
			if held[m] {
				continue
			}
			kept = append(kept, len(out))
			out = append(out, JournalEntry{Arrival: j, Seq: seq, CauseEventID: eventID[p.FactKey],
				FactKey: p.FactKey, Rank: p.Rank, EffectiveAt: p.EffectiveAt, RecordedAt: a.RecordedAt,
				Currency: p.Currency, Reverses: -1, Lines: p.Lines})
			seq++
		}
		live = kept
	}
	return out
}

// insertSorted inserts e into facts (sorted as Fold sorts: stable, so after
// the equal ones already there) and reports whether Fold would drop it as a
// repeat of the fact before it, which leaves the fold as it was.
func insertSorted(facts []Event, e Event) ([]Event, bool) {
	i := len(facts)
	for i > 0 && compareEvents(facts[i-1], e) > 0 {
		i--
	}
	repeat := i > 0 && facts[i-1].EventMeta().Key() == e.EventMeta().Key()
	return slices.Insert(facts, i, e), repeat
}

// dedup drops the repeats Fold drops: a fact with the key of the one before.
func dedup(sorted []Event) []Event {
	out := make([]Event, 0, len(sorted))
	for i, e := range sorted {
		if i == 0 || e.EventMeta().Key() != sorted[i-1].EventMeta().Key() {
			out = append(out, e)
		}
	}
	return out
}

// matchPosting returns the index of the posting not yet held that e is, or -1.
func matchPosting(e JournalEntry, ideal []Posting, held []bool) int {
	for m, p := range ideal {
		if !held[m] && p.FactKey == e.FactKey && p.Currency == e.Currency &&
			p.EffectiveAt.Equal(e.EffectiveAt) && slices.Equal(p.Lines, e.Lines) {
			return m
		}
	}
	return -1
}

// reversal is the entry that undoes out[i] at arrival j.
func reversal(e JournalEntry, i, j, seq int, a Arrival) JournalEntry {
	lines := make([]Line, len(e.Lines))
	for n, l := range e.Lines {
		lines[n] = Line{Account: l.Account, Debit: l.Credit, Credit: l.Debit}
	}
	return JournalEntry{Arrival: j, Seq: seq, CauseEventID: a.EventID, FactKey: e.FactKey, Rank: e.Rank,
		EffectiveAt: e.EffectiveAt, RecordedAt: a.RecordedAt, Currency: e.Currency, Reverses: i, Lines: lines}
}
