package api

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func csvGet(path string) *http.Request {
	req := get(path, readToken)
	req.Header.Set("Accept", "text/csv")
	return req
}

// parseCSV reads an RFC 4180 answer into its header and rows, requiring
// CRLF line ends.
func parseCSV(t *testing.T, res response) ([]string, [][]string) {
	t.Helper()
	if ct := res.header.Get("Content-Type"); ct != csvContentType {
		t.Fatalf("Content-Type %q: %s", ct, res.raw)
	}
	if !bytes.HasSuffix(res.raw, []byte("\r\n")) || bytes.Count(res.raw, []byte("\n")) != bytes.Count(res.raw, []byte("\r\n")) {
		t.Errorf("not CRLF line ends: %q", res.raw)
	}
	recs, err := csv.NewReader(bytes.NewReader(res.raw)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("CSV: %v\n%s", err, res.raw)
	}
	return recs[0], recs[1:]
}

// jsonRows flattens decoded JSON objects into CSV rows by column name: a
// column is the object's field, or its parent's (entry columns on a line).
// decimal is checked apart, so it is taken from the CSV row itself.
func jsonRow(header []string, objs ...map[string]any) []string {
	row := make([]string, len(header))
	for i, col := range header {
		for _, o := range objs {
			v, ok := o[col]
			if !ok {
				continue
			}
			switch v := v.(type) {
			case nil:
				row[i] = ""
			case float64:
				row[i] = strconv.FormatInt(int64(v), 10)
			default:
				row[i] = fmt.Sprint(v)
			}
			break
		}
	}
	return row
}

// checkDecimal: the decimal column is amount in major units of cur, checked
// by parsing it back (domain.ParseMinorUnits) and by its count of decimals.
func checkDecimal(t *testing.T, dec string, amount int64, cur string) {
	t.Helper()
	c := domain.Currency(cur)
	got, err := domain.ParseMinorUnits(dec, c)
	_, frac, _ := strings.Cut(dec, ".")
	if err != nil || got != amount || len(frac) != c.Exponent() {
		t.Errorf("decimal %q for %d %s (parsed %d, %v)", dec, amount, cur, got, err)
	}
}

func objects(t *testing.T, v any) []map[string]any {
	t.Helper()
	arr, ok := v.([]any)
	if !ok {
		t.Fatalf("not an array: %v", v)
	}
	out := make([]map[string]any, len(arr))
	for i, x := range arr {
		out[i] = x.(map[string]any)
	}
	return out
}

func decimalIndex(t *testing.T, header []string) int {
	t.Helper()
	for i, h := range header {
		if h == "decimal" {
			return i
		}
	}
	t.Fatalf("no decimal column in %v", header)
	return -1
}

// CSV and JSON answer the same for the same query.
func TestLedgerCSVEqualsJSON(t *testing.T) {
	tests := []struct {
		name, path, list, amount string
		header                   []string
	}{
		{"balances", "/v1/ledger/balances?as_of=2025-03-31T23:59:59Z&basis=recorded", "balances", "balance", balanceHeader},
		{"daily", "/v1/ledger/daily?from=2025-03-01&to=2025-03-02&tz=America/Sao_Paulo", "days", "closing_balance", dayHeader},
		{"entries", "/v1/ledger/entries?from=2025-03-01T00:00:00Z", "entries", "", entryHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, _ := ledgerEnv(t)
			srv := env.server(t)
			js := serve(t, srv, get(tc.path, readToken))
			cs := serve(t, srv, csvGet(tc.path))
			if js.status != 200 || cs.status != 200 {
				t.Fatalf("JSON %d, CSV %d: %s", js.status, cs.status, cs.raw)
			}
			if want := `attachment; filename="ledger-` + tc.name + `.csv"`; cs.header.Get("Content-Disposition") != want {
				t.Errorf("Content-Disposition %q", cs.header.Get("Content-Disposition"))
			}
			header, rows := parseCSV(t, cs)
			if !reflect.DeepEqual(header, tc.header) {
				t.Fatalf("header %v, want %v", header, tc.header)
			}
			dec := decimalIndex(t, header)
			var want [][]string
			for _, o := range objects(t, js.body[tc.list]) {
				if tc.list != "entries" {
					want = append(want, jsonRow(header, o, js.body))
					continue
				}
				for _, l := range objects(t, o["lines"]) {
					want = append(want, jsonRow(header, l, o))
				}
			}
			if len(rows) != len(want) || len(rows) == 0 {
				t.Fatalf("%d CSV rows, %d from JSON", len(rows), len(want))
			}
			for i := range rows {
				got := append([]string(nil), rows[i]...)
				cur := got[columnOf(header, "currency")]
				var amount int64
				if tc.amount != "" {
					amount, _ = strconv.ParseInt(got[columnOf(header, tc.amount)], 10, 64)
				} else {
					d, _ := strconv.ParseInt(got[columnOf(header, "debit")], 10, 64)
					c, _ := strconv.ParseInt(got[columnOf(header, "credit")], 10, 64)
					amount = d - c
				}
				checkDecimal(t, got[dec], amount, cur)
				got[dec] = ""
				if !reflect.DeepEqual(got, want[i]) {
					t.Errorf("row %d:\n CSV  %q\n JSON %q", i, got, want[i])
				}
			}
		})
	}
}

func columnOf(header []string, col string) int {
	for i, h := range header {
		if h == col {
			return i
		}
	}
	panic("no column " + col)
}

// An entry's lines sum to zero in the decimal column, and the reversal of
// an entry shows the entry it reverses.
func TestLedgerEntriesCSVRows(t *testing.T) {
	env, _ := ledgerEnv(t)
	res := serve(t, env.server(t), csvGet("/v1/ledger/entries"))
	want := "id,provider,provider_payment_id,currency,effective_at,recorded_at,cause_event_id,reverses,account,debit,credit,decimal\r\n" +
		"le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-1,stripe,pi_3Mtw-Bq_2eZvKYlo,USD,2025-03-01T12:00:00Z,2025-03-01T12:00:01.25Z,5b0c8a3e-6f1d-5a8e-9c41-2d7e0f3b9a10,,provider_balance,2000,0,20.00\r\n" +
		"le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-1,stripe,pi_3Mtw-Bq_2eZvKYlo,USD,2025-03-01T12:00:00Z,2025-03-01T12:00:01.25Z,5b0c8a3e-6f1d-5a8e-9c41-2d7e0f3b9a10,,sales,0,2000,-20.00\r\n" +
		"le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-2,stripe,pi_3Mtw-Bq_2eZvKYlo,USD,2025-03-01T12:00:00Z,2025-03-02T08:00:00Z,9d1e44b0-2c3f-5e7a-8b90-0a1b2c3d4e5f,le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-1,provider_balance,0,2000,-20.00\r\n" +
		"le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-2,stripe,pi_3Mtw-Bq_2eZvKYlo,USD,2025-03-01T12:00:00Z,2025-03-02T08:00:00Z,9d1e44b0-2c3f-5e7a-8b90-0a1b2c3d4e5f,le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-1,sales,2000,0,20.00\r\n"
	if res.status != 200 || string(res.raw) != want {
		t.Errorf("got %d\n%s\nwant\n%s", res.status, res.raw, want)
	}
}

func TestFormatMinor(t *testing.T) {
	tests := []struct {
		amount int64
		cur    domain.Currency
		want   string
	}{
		{2000, "USD", "20.00"},
		{5, "USD", "0.05"},
		{99, "USD", "0.99"},
		{100, "USD", "1.00"},
		{0, "USD", "0.00"},
		{-150, "USD", "-1.50"},
		{-5, "USD", "-0.05"},
		{2000, "JPY", "2000"},
		{0, "JPY", "0"},
		{-7, "JPY", "-7"},
		{1500, "BHD", "1.500"},
		{1, "BHD", "0.001"},
		{-1234, "KWD", "-1.234"},
		{12345, "CLF", "1.2345"},
		{123456789, "BRL", "1234567.89"},
		{math.MaxInt64, "USD", "92233720368547758.07"},
		{math.MinInt64, "USD", "-92233720368547758.08"},
		{math.MinInt64, "JPY", "-9223372036854775808"},
	}
	for _, tc := range tests {
		if got := formatMinor(tc.amount, tc.cur); got != tc.want {
			t.Errorf("formatMinor(%d, %s) = %q, want %q", tc.amount, tc.cur, got, tc.want)
		}
		if tc.amount == math.MinInt64 { // ParseMinorUnits does not reach it
			continue
		}
		if back, err := domain.ParseMinorUnits(tc.want, tc.cur); err != nil || back != tc.amount {
			t.Errorf("ParseMinorUnits(%q) = %d, %v", tc.want, back, err)
		}
	}
}

func TestWantsCSV(t *testing.T) {
	tests := []struct {
		accept []string
		want   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"text/csv"}, true},
		{[]string{"TEXT/CSV; charset=utf-8"}, true},
		{[]string{"text/*"}, true},
		{[]string{"*/*"}, false},
		{[]string{"application/json"}, false},
		{[]string{"application/json, text/csv;q=0.5"}, false},
		{[]string{"text/csv, application/json;q=0.9"}, true},
		{[]string{"text/csv;q=0.9, application/json;q=0.9"}, false}, // a tie is JSON
		{[]string{"text/csv;q=0"}, false},
		{[]string{"text/csv;q=0, */*"}, false},
		{[]string{"text/csv;q=abc"}, false},
		{[]string{"text/csv;q=0.5, */*;q=0.1"}, true},
		{[]string{"text/*;q=0.2, text/csv;q=0.8, application/*;q=0.5"}, true},
		{[]string{"text/csv;q=0.3, text/*;q=1, application/json;q=0.5"}, false}, // the specific range decides
		{[]string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, false},
		{[]string{"application/json;q=0.1", "text/csv"}, true}, // several Accept lines
		{[]string{";;;, text/csv"}, true},
	}
	for _, tc := range tests {
		req := httptest.NewRequest(http.MethodGet, "/v1/ledger/balances", nil)
		for _, a := range tc.accept {
			req.Header.Add("Accept", a)
		}
		if got := wantsCSV(req); got != tc.want {
			t.Errorf("Accept %q: CSV %v, want %v", tc.accept, got, tc.want)
		}
	}
}

// pagedLedger serves n generated entries in pages of the asked limit and
// records, at each call, how many CSV rows the client had already received:
// proof that pages are flushed as they come, not gathered.
type pagedLedger struct {
	entries  []domain.LedgerEntry
	rec      *httptest.ResponseRecorder
	seenRows []int
	fail     int // fail the call with this index (1-based); 0: never
	fakeLedger
}

func newPagedLedger(n int) *pagedLedger {
	p := &pagedLedger{}
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		lines := []domain.Line{{Account: domain.AccountProviderBalance, Debit: int64(100 + i)}, {Account: domain.AccountSales, Credit: int64(100 + i)}}
		if i%3 == 0 { // a fee entry has its own shape; three lines exercise the repetition
			lines = []domain.Line{{Account: domain.AccountProviderBalance, Debit: 70}, {Account: domain.AccountFees, Debit: 30},
				{Account: domain.AccountSales, Credit: 100}}
		}
		p.entries = append(p.entries, domain.LedgerEntry{ID: fmt.Sprintf("le_%06d", i), Provider: "stripe",
			ProviderPaymentID: fmt.Sprintf("pi_%d-x_y", i/4), Currency: "USD", EffectiveAt: at.Add(time.Duration(i) * time.Minute),
			RecordedAt: at.Add(time.Duration(i) * time.Minute), CauseEventID: fmt.Sprintf("evt-%d", i), Lines: lines})
	}
	p.EntriesFn = p.page
	return p
}

func (p *pagedLedger) page(_ context.Context, q domain.EntryQuery) (domain.EntryPage, error) {
	if p.rec != nil {
		p.seenRows = append(p.seenRows, bytes.Count(p.rec.Body.Bytes(), []byte("\r\n")))
	}
	if p.fail != 0 && len(p.entryQs) == p.fail {
		return domain.EntryPage{}, errors.New("postgres: connection reset")
	}
	start := 0
	if q.Cursor != "" {
		var err error
		if start, err = strconv.Atoi(strings.TrimPrefix(q.Cursor, "at_")); err != nil {
			return domain.EntryPage{}, domain.Invalid("fake: cursor", "malformed cursor", err)
		}
	}
	limit := q.Limit
	if limit == 0 {
		limit = domain.DefaultPageSize
	}
	end := min(start+limit, len(p.entries))
	page := domain.EntryPage{Entries: p.entries[start:end]}
	if end < len(p.entries) {
		page.NextCursor = fmt.Sprintf("at_%d", end)
	}
	return page, nil
}

// The whole-selection export pages through the reader at the largest page
// size, flushing each page before asking for the next, and ends with every
// entry's every line exactly once.
func TestLedgerEntriesCSVStreams(t *testing.T) {
	const n = 2345 // 5 pages, the last one partial
	env, _ := ledgerEnv(t)
	pl := newPagedLedger(n)
	env.deps.Ledger = pl
	srv := env.server(t)
	req := csvGet("/v1/ledger/entries?provider=stripe&basis=recorded&from=2025-03-01T00:00:00Z")
	pl.rec = httptest.NewRecorder()
	srv.ServeHTTP(pl.rec, req)
	res := response{status: pl.rec.Code, header: pl.rec.Header(), raw: pl.rec.Body.Bytes()}
	checkContract(t, req, res.status, res.header, res.raw)
	if res.status != 200 || !pl.rec.Flushed {
		t.Fatalf("status %d, flushed %v", res.status, pl.rec.Flushed)
	}
	if len(pl.entryQs) != 5 {
		t.Fatalf("%d reader calls, want 5", len(pl.entryQs))
	}
	for i, q := range pl.entryQs {
		wantCursor := ""
		if i > 0 {
			wantCursor = fmt.Sprintf("at_%d", i*domain.MaxPageSize)
		}
		if q.Limit != domain.MaxPageSize || q.Cursor != wantCursor || q.Provider != "stripe" || q.Basis != domain.BasisRecorded || q.From.IsZero() {
			t.Errorf("call %d: %+v", i, q)
		}
	}
	// Rows already out when each page was asked for: the header, then one
	// more page's lines each time.
	lines := func(es []domain.LedgerEntry) (k int) {
		for _, e := range es {
			k += len(e.Lines)
		}
		return k
	}
	for i, seen := range pl.seenRows {
		if want := 1 + lines(pl.entries[:i*domain.MaxPageSize]); i > 0 && seen != want {
			t.Errorf("before page %d the client had %d rows, want %d", i, seen, want)
		}
	}
	header, rows := parseCSV(t, res)
	if !reflect.DeepEqual(header, entryHeader) || len(rows) != lines(pl.entries) {
		t.Fatalf("%d rows, want %d", len(rows), lines(pl.entries))
	}
	if res.header.Get("X-Next-Cursor") != "" {
		t.Errorf("a whole export has no next cursor: %q", res.header.Get("X-Next-Cursor"))
	}
	k := 0
	for _, e := range pl.entries {
		for _, l := range e.Lines {
			r := rows[k]
			if r[0] != e.ID || r[8] != string(l.Account) || r[9] != itoa(l.Debit) || r[10] != itoa(l.Credit) ||
				r[11] != formatMinor(l.Debit-l.Credit, e.Currency) || r[4] != formatTime(e.EffectiveAt) {
				t.Fatalf("row %d = %q for entry %s line %+v", k, r, e.ID, l)
			}
			k++
		}
	}
}

// With a cursor or a limit the CSV is one page, and X-Next-Cursor says
// where the next one starts.
func TestLedgerEntriesCSVOnePage(t *testing.T) {
	tests := []struct {
		query      string
		wantLimit  int
		wantCursor string
		rows       int
		next       string
	}{
		{"limit=10", 10, "", 10, "at_10"},
		{"limit=10&cursor=at_20", 10, "at_20", 10, "at_30"},
		{"cursor=at_20", 0, "at_20", domain.DefaultPageSize, "at_70"},
		{"cursor=at_95", 0, "at_95", 5, ""},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			env, _ := ledgerEnv(t)
			pl := newPagedLedger(100)
			for i := range pl.entries { // two lines each, so rows count entries twice
				pl.entries[i].Lines = pl.entries[i].Lines[len(pl.entries[i].Lines)-2:]
			}
			env.deps.Ledger = pl
			res := serve(t, env.server(t), csvGet("/v1/ledger/entries?"+tc.query))
			_, rows := parseCSV(t, res)
			if len(pl.entryQs) != 1 || pl.entryQs[0].Limit != tc.wantLimit || pl.entryQs[0].Cursor != tc.wantCursor {
				t.Fatalf("reader queries %+v", pl.entryQs)
			}
			if len(rows) != 2*tc.rows || res.header.Get("X-Next-Cursor") != tc.next {
				t.Errorf("%d rows, X-Next-Cursor %q; want %d, %q", len(rows), res.header.Get("X-Next-Cursor"), 2*tc.rows, tc.next)
			}
			_, hasNext := res.header["X-Next-Cursor"]
			if hasNext != (tc.next != "") {
				t.Errorf("X-Next-Cursor present %v on %q", hasNext, tc.next)
			}
		})
	}
}

// A failure after the 200 went out breaks the connection: the client sees a
// failed transfer, never a clean end of a truncated export.
func TestLedgerEntriesCSVFailsMidway(t *testing.T) {
	env, _ := ledgerEnv(t)
	pl := newPagedLedger(1200)
	pl.fail = 2 // the second page
	env.deps.Ledger = pl
	ts := httptest.NewServer(env.server(t))
	defer ts.Close()

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+"/v1/ledger/entries", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+readToken)
	req.Header.Set("Accept", "text/csv")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || err == nil {
		t.Fatalf("status %d, read error %v after %d bytes: want 200 and a broken transfer", resp.StatusCode, err, len(body))
	}
	if !bytes.HasPrefix(body, []byte(strings.Join(entryHeader, ",")+"\r\n")) {
		t.Errorf("body starts %q", body[:min(len(body), 80)])
	}
}

// A reader whose cursor does not advance would make an endless export; it
// is cut off as a failure instead.
func TestLedgerEntriesCSVStuckCursor(t *testing.T) {
	env, _ := ledgerEnv(t)
	env.deps.Ledger = &fakeLedger{EntriesFn: func(context.Context, domain.EntryQuery) (domain.EntryPage, error) {
		return domain.EntryPage{Entries: sampleEntries, NextCursor: "same"}, nil
	}}
	srv := env.server(t)
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler", v)
		}
	}()
	srv.ServeHTTP(httptest.NewRecorder(), csvGet("/v1/ledger/entries"))
	t.Error("the export ended normally")
}
