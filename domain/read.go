package domain

import "time"

// Read-side value types shared by the API and the projections, so neither
// imports the other.

// PaymentFilter selects payments for a list query.
type PaymentFilter struct {
	Provider string // empty: any
	Status   Status // empty: any
	// RequiresReview, when set, keeps the payments whose requires_review is it.
	RequiresReview *bool
	// CreatedFrom and CreatedTo, when set, bound the provider time of the
	// payment's first fact (created_at), both inclusive.
	CreatedFrom, CreatedTo *time.Time
	// Currency keeps one currency; MinAmount and MaxAmount (minor units of
	// it, inclusive) need it, since amounts of two currencies do not compare.
	Currency             Currency
	MinAmount, MaxAmount *int64
	Limit                int    // 1..MaxPageSize; 0 means DefaultPageSize
	Cursor               string // opaque, from a previous page's NextCursor; empty: first page
}

// Page sizes of payment lists.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// PaymentPage is one page of a payment list. NextCursor is empty on the last page.
type PaymentPage struct {
	Payments   []PaymentState
	NextCursor string
}

// Basis is the time axis of a ledger query: effective time (the provider
// time of the fact, "the books for T as known now") or recorded time (when
// the ledger learned it, "the books as known at T").
type Basis string

// The two bases.
const (
	BasisEffective Basis = "effective"
	BasisRecorded  Basis = "recorded"
)

// Valid reports whether b is one of the bases.
func (b Basis) Valid() bool { return b == BasisEffective || b == BasisRecorded }

// LedgerFilter narrows a ledger query; empty fields match everything.
type LedgerFilter struct {
	Provider string
	Currency Currency
	Account  Account
}

// BalanceQuery asks for every account's balance at AsOf (inclusive) on Basis.
type BalanceQuery struct {
	LedgerFilter
	AsOf  time.Time
	Basis Basis
}

// AccountBalance is the debits and credits of one ledger account up to a
// moment. Accounts without entries are not reported.
type AccountBalance struct {
	Account  Account
	Provider string
	Currency Currency
	Debits   int64
	Credits  int64
}

// Balance is the balance on the account's normal side.
func (b AccountBalance) Balance() int64 { return b.Account.NormalBalance(b.Debits, b.Credits) }

// MaxDailyDays bounds a daily query's range (from and to inclusive).
const MaxDailyDays = 400

// DailyQuery asks for the activity and closing balance of every account per
// calendar day in Location, by effective time, From through To inclusive.
// From and To are midnights in Location.
type DailyQuery struct {
	LedgerFilter
	From, To time.Time
	Location *time.Location
}

// DayBalance is one account's activity on one day and its balance at the
// day's end (on the normal side). Day is "YYYY-MM-DD" in the query's zone.
type DayBalance struct {
	Day            string
	Account        Account
	Provider       string
	Currency       Currency
	Debits         int64
	Credits        int64
	ClosingBalance int64
}

// EntryQuery selects journal entries with the basis time in [From, To) (a
// zero bound is open) and, when Account is set, a line on that account.
type EntryQuery struct {
	LedgerFilter
	From, To time.Time
	Basis    Basis
	Limit    int    // 1..MaxPageSize; 0 means DefaultPageSize
	Cursor   string // opaque, from a previous page's NextCursor; empty: first page
}

// LedgerEntry is a stored journal entry as the read API serves it.
type LedgerEntry struct {
	ID                string
	Provider          string
	ProviderPaymentID string
	Currency          Currency
	EffectiveAt       time.Time
	RecordedAt        time.Time
	CauseEventID      string
	Reverses          string // the reversed entry's ID; empty when none
	Lines             []Line
}

// EntryPage is one page of entries. NextCursor is empty on the last page.
type EntryPage struct {
	Entries    []LedgerEntry
	NextCursor string
}
