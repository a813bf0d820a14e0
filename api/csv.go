package api

import (
	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
)

// csvContentType is RFC 4180's media type; header=present says the first
// row names the columns.
const csvContentType = "text/csv; charset=utf-8; header=present"

// exportWriteTimeout is the write deadline of each page of a streamed
// export, so the server's WriteTimeout bounds a page rather than a whole
// export. Deadlines are wall-clock time, hence time.Now, not cfg.Now.
const exportWriteTimeout = 30 * time.Second

// The CSV columns. decimal is the row's amount in major units with the
// currency's exponent: the balance, the closing balance, or the line's
// signed amount (debit positive, credit negative: an entry's lines sum to 0).
var (
	balanceHeader = []string{"as_of", "basis", "account", "provider", "currency", "normal", "debits", "credits", "balance", "decimal"}
	dayHeader     = []string{"day", "account", "provider", "currency", "debits", "credits", "closing_balance", "decimal"}
	entryHeader   = []string{"id", "provider", "provider_payment_id", "currency", "effective_at", "recorded_at",
		"cause_event_id", "reverses", "account", "debit", "credit", "decimal"}
)

// wantsCSV negotiates the ledger routes' two representations by the Accept
// header's q-values (RFC 9110 §12.5.1): CSV only when text/csv is preferred
// to JSON strictly, so a missing Accept, */* and ties answer JSON.
func wantsCSV(r *http.Request) bool {
	accept := r.Header.Values("Accept")
	return acceptQ(accept, "text", "csv") > acceptQ(accept, "application", "json")
}

// acceptQ is the q-value the Accept header gives typ/sub: that of the most
// specific range matching it (type/sub, then type/*, then */*), 0 if none.
func acceptQ(header []string, typ, sub string) float64 {
	best, q := -1, 0.0
	for _, h := range header {
		for _, part := range strings.Split(h, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			rt, rs, _ := strings.Cut(mt, "/")
			spec := -1
			switch {
			case rt == typ && rs == sub:
				spec = 2
			case rt == typ && rs == "*":
				spec = 1
			case rt == "*" && rs == "*":
				spec = 0
			}
			if spec > best {
				best, q = spec, parseQ(params["q"])
			}
		}
	}
	return q
}

// parseQ reads a qvalue; absent is 1, unreadable is 0 (not acceptable).
func parseQ(s string) float64 {
	if s == "" {
		return 1
	}
	q, err := strconv.ParseFloat(s, 64)
	if err != nil || q < 0 || q > 1 {
		return 0
	}
	return q
}

// csvOut is a CSV answer under way. The status goes out with startCSV, so
// everything that can still fail with an error body happens before it.
type csvOut struct {
	w  *csv.Writer
	rc *http.ResponseController
}

func startCSV(w http.ResponseWriter, name string, header []string) *csvOut {
	h := w.Header()
	h.Set("Content-Type", csvContentType)
	h.Set("Content-Disposition", `attachment; filename="ledger-`+name+`.csv"`)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	out := &csvOut{w: csv.NewWriter(w), rc: http.NewResponseController(w)}
	out.w.UseCRLF = true    // RFC 4180 line breaks
	_ = out.w.Write(header) // an error stays in the writer; write reports it
	return out
}

// write writes records and flushes them to the client, so a streamed export
// never holds more than a page.
func (c *csvOut) write(records [][]string) error {
	// Not every ResponseWriter can set deadlines (httptest cannot); without
	// one the server's own timeouts apply.
	_ = c.rc.SetWriteDeadline(time.Now().Add(exportWriteTimeout))
	for _, rec := range records {
		if err := c.w.Write(rec); err != nil {
			return err
		}
	}
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return err
	}
	if err := c.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// writeCSV writes a whole CSV answer.
func (s *Server) writeCSV(w http.ResponseWriter, r *http.Request, name string, header []string, records [][]string) {
	if err := startCSV(w, name, header).write(records); err != nil {
		s.abortCSV(r, err)
	}
}

// abortCSV ends a CSV answer that failed after its 200 went out, and does
// not return: it panics with net/http's ErrAbortHandler, which breaks the
// connection, so the client sees a failed transfer. A cleanly ended but
// truncated export would read as complete.
func (s *Server) abortCSV(r *http.Request, err error) {
	s.log.LogAttrs(r.Context(), slog.LevelError, "api: csv export aborted",
		slog.String("request_id", requestIDFrom(r.Context())), slog.String("path", r.URL.Path),
		slog.String("error", err.Error()))
	panic(http.ErrAbortHandler)
}

// streamEntries answers entries as CSV. With a cursor or a limit it is that
// one page, the next cursor in X-Next-Cursor; without, the whole selection,
// read page by page at the largest page size and flushed as it goes.
func (s *Server) streamEntries(w http.ResponseWriter, r *http.Request, q domain.EntryQuery) {
	single := q.Cursor != "" || q.Limit != 0
	if !single {
		q.Limit = domain.MaxPageSize
	}
	page, err := s.ledger.Entries(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if single && page.NextCursor != "" {
		w.Header().Set("X-Next-Cursor", page.NextCursor)
	}
	out := startCSV(w, "entries", entryHeader)
	for {
		if err := out.write(entryRecords(page.Entries)); err != nil {
			s.abortCSV(r, err)
		}
		if single || page.NextCursor == "" {
			return
		}
		if page.NextCursor == q.Cursor { // a reader bug would loop forever
			s.abortCSV(r, fmt.Errorf("api: ledger entries: cursor %q did not advance", q.Cursor))
		}
		q.Cursor = page.NextCursor
		if page, err = s.ledger.Entries(r.Context(), q); err != nil {
			s.abortCSV(r, fmt.Errorf("api: ledger entries: next page: %w", err))
		}
	}
}

func balanceRecords(l balanceList) [][]string {
	out := make([][]string, 0, len(l.Balances))
	for _, b := range l.Balances {
		out = append(out, []string{l.AsOf, string(l.Basis), string(b.Account), b.Provider, string(b.Currency),
			string(b.Normal), itoa(b.Debits), itoa(b.Credits), itoa(b.Balance), formatMinor(b.Balance, b.Currency)})
	}
	return out
}

func dayRecords(l dayList) [][]string {
	out := make([][]string, 0, len(l.Days))
	for _, d := range l.Days {
		out = append(out, []string{d.Day, string(d.Account), d.Provider, string(d.Currency), itoa(d.Debits),
			itoa(d.Credits), itoa(d.ClosingBalance), formatMinor(d.ClosingBalance, d.Currency)})
	}
	return out
}

// entryRecords writes one row per line, the entry's columns repeated.
func entryRecords(entries []domain.LedgerEntry) [][]string {
	var out [][]string
	for _, e := range entries {
		v := viewEntry(e)
		reverses := ""
		if v.Reverses != nil {
			reverses = *v.Reverses
		}
		for _, l := range v.Lines {
			out = append(out, []string{v.ID, v.Provider, v.ProviderPaymentID, string(v.Currency), v.EffectiveAt,
				v.RecordedAt, v.CauseEventID, reverses, string(l.Account), itoa(l.Debit), itoa(l.Credit),
				formatMinor(l.Debit-l.Credit, v.Currency)})
		}
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// formatMinor renders minor units in major units with c's exponent, exactly
// (no floating point): 2000 USD "20.00", 2000 JPY "2000", 1500 BHD "1.500",
// -150 USD "-1.50".
func formatMinor(amount int64, c domain.Currency) string {
	neg := amount < 0
	u := uint64(amount)
	if neg {
		u = -u // two's complement: right for math.MinInt64 too
	}
	digits := strconv.FormatUint(u, 10)
	exp := c.Exponent()
	if exp > 0 {
		if len(digits) <= exp {
			digits = strings.Repeat("0", exp-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-exp] + "." + digits[len(digits)-exp:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}
