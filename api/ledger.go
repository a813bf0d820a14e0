package api

import (
	"cmp"
	"net/http"
	"slices"

	"github.com/gorilla/mux"

	"github.com/payledger/payledger/domain"
)

// ledgerBalances serves GET /v1/ledger/balances, as JSON or CSV.
func (s *Server) ledgerBalances(w http.ResponseWriter, r *http.Request) {
	q, err := parseBalanceQuery(r.URL.Query(), s.known, s.cfg.Now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rows, err := s.ledger.Balances(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := viewBalances(q, rows)
	if wantsCSV(r) {
		s.writeCSV(w, r, "balances", balanceHeader, balanceRecords(out))
		return
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

// ledgerDaily serves GET /v1/ledger/daily, as JSON or CSV.
func (s *Server) ledgerDaily(w http.ResponseWriter, r *http.Request) {
	q, err := parseDailyQuery(r.URL.Query(), s.known)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rows, err := s.ledger.Daily(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := viewDays(rows)
	if wantsCSV(r) {
		s.writeCSV(w, r, "daily", dayHeader, dayRecords(out))
		return
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

// ledgerEntries serves GET /v1/ledger/entries: one page as JSON, or as CSV
// either one page (with cursor or limit) or the whole selection streamed.
func (s *Server) ledgerEntries(w http.ResponseWriter, r *http.Request) {
	q, err := parseEntryQuery(r.URL.Query(), s.known)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if wantsCSV(r) {
		s.streamEntries(w, r, q)
		return
	}
	page, err := s.ledger.Entries(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, viewEntries(page.Entries, page.NextCursor))
}

// paymentLedger serves GET /v1/payments/{provider}/{provider_payment_id}/ledger:
// the payment's whole journal in fold order, in one answer (a payment has a
// handful of entries), so next_cursor is always "".
func (s *Server) paymentLedger(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	at, err := parseAsOf("api: payment ledger", r.URL.Query())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !at.now() {
		// A payment not yet born at the moment is 404, as on its own route.
		if _, _, err := s.facts(r.Context(), v["provider"], v["provider_payment_id"], at); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	entries, err := s.ledger.PaymentLedger(r.Context(), v["provider"], v["provider_payment_id"])
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// Entries are never edited: those on the axis up to the moment are the
	// payment's books as of it (see domain.Journal).
	held := entries[:0:0]
	for _, e := range entries {
		if at.holds(e) {
			held = append(held, e)
		}
	}
	s.writeJSON(w, r, http.StatusOK, viewEntries(held, ""))
}

// balanceList is the body of the balances route.
type balanceList struct {
	AsOf     string        `json:"as_of"`
	Basis    domain.Basis  `json:"basis"`
	Balances []balanceView `json:"balances"`
}

type balanceView struct {
	Account  domain.Account  `json:"account"`
	Provider string          `json:"provider"`
	Currency domain.Currency `json:"currency"`
	Normal   domain.Side     `json:"normal"`
	Debits   int64           `json:"debits"`
	Credits  int64           `json:"credits"`
	Balance  int64           `json:"balance"`
}

// viewBalances sorts the rows by provider, currency, then chart order, so
// the documented order holds whatever order the reader found them in.
func viewBalances(q domain.BalanceQuery, rows []domain.AccountBalance) balanceList {
	out := balanceList{AsOf: formatTime(q.AsOf), Basis: q.Basis, Balances: make([]balanceView, 0, len(rows))}
	for _, b := range rows {
		out.Balances = append(out.Balances, balanceView{Account: b.Account, Provider: b.Provider,
			Currency: b.Currency, Normal: b.Account.Normal(), Debits: b.Debits, Credits: b.Credits, Balance: b.Balance()})
	}
	slices.SortStableFunc(out.Balances, func(a, b balanceView) int {
		return compareAccounts("", a.Provider, a.Currency, a.Account, "", b.Provider, b.Currency, b.Account)
	})
	return out
}

// compareAccounts orders ledger accounts by day (daily rows), provider,
// currency, then the chart's order.
func compareAccounts(dayA, provA string, curA domain.Currency, accA domain.Account,
	dayB, provB string, curB domain.Currency, accB domain.Account) int {
	return cmp.Or(cmp.Compare(dayA, dayB), cmp.Compare(provA, provB), cmp.Compare(curA, curB),
		cmp.Compare(slices.Index(domain.Accounts(), accA), slices.Index(domain.Accounts(), accB)))
}

// dayList is the body of the daily route.
type dayList struct {
	Days []dayView `json:"days"`
}

type dayView struct {
	Day            string          `json:"day"`
	Account        domain.Account  `json:"account"`
	Provider       string          `json:"provider"`
	Currency       domain.Currency `json:"currency"`
	Debits         int64           `json:"debits"`
	Credits        int64           `json:"credits"`
	ClosingBalance int64           `json:"closing_balance"`
}

// viewDays sorts the rows by day, provider, currency, then chart order.
func viewDays(rows []domain.DayBalance) dayList {
	out := dayList{Days: make([]dayView, 0, len(rows))}
	for _, d := range rows {
		out.Days = append(out.Days, dayView(d))
	}
	slices.SortStableFunc(out.Days, func(a, b dayView) int {
		return compareAccounts(a.Day, a.Provider, a.Currency, a.Account, b.Day, b.Provider, b.Currency, b.Account)
	})
	return out
}

// entryList is the body of the entries and payment ledger routes.
// NextCursor is "" on the last page and always present, as for payments.
type entryList struct {
	Entries    []entryView `json:"entries"`
	NextCursor string      `json:"next_cursor"`
}

type entryView struct {
	ID                string          `json:"id"`
	Provider          string          `json:"provider"`
	ProviderPaymentID string          `json:"provider_payment_id"`
	Currency          domain.Currency `json:"currency"`
	EffectiveAt       string          `json:"effective_at"`
	RecordedAt        string          `json:"recorded_at"`
	CauseEventID      string          `json:"cause_event_id"`
	Reverses          *string         `json:"reverses"` // null when the entry reverses nothing
	Lines             []lineView      `json:"lines"`
}

type lineView struct {
	Account domain.Account `json:"account"`
	Debit   int64          `json:"debit"`
	Credit  int64          `json:"credit"`
}

func viewEntries(entries []domain.LedgerEntry, next string) entryList {
	out := entryList{Entries: make([]entryView, 0, len(entries)), NextCursor: next}
	for _, e := range entries {
		out.Entries = append(out.Entries, viewEntry(e))
	}
	return out
}

func viewEntry(e domain.LedgerEntry) entryView {
	v := entryView{ID: e.ID, Provider: e.Provider, ProviderPaymentID: e.ProviderPaymentID, Currency: e.Currency,
		EffectiveAt: formatTime(e.EffectiveAt), RecordedAt: formatTime(e.RecordedAt), CauseEventID: e.CauseEventID,
		Lines: make([]lineView, 0, len(e.Lines))}
	if e.Reverses != "" {
		v.Reverses = &e.Reverses
	}
	for _, l := range e.Lines {
		v.Lines = append(v.Lines, lineView(l))
	}
	return v
}
