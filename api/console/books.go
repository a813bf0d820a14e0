package console

import (
	"bufio"
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

type (
	balance struct {
		Account  string `json:"account"`
		Provider string `json:"provider"`
		Currency string `json:"currency"`
		Normal   string `json:"normal"`
		Debits   int64  `json:"debits"`
		Credits  int64  `json:"credits"`
		Balance  int64  `json:"balance"`
	}
	day struct {
		Day      string `json:"day"`
		Account  string `json:"account"`
		Provider string `json:"provider"`
		Currency string `json:"currency"`
		Debits   int64  `json:"debits"`
		Credits  int64  `json:"credits"`
	}
)

// ledgerData is the ledger page: balances as of a moment, a daily chart per
// provider and currency, and the CSV links of what is shown.
type ledgerData struct {
	AsOf, Basis, From, To string
	Balances              []balance
	Charts                []chart
	// The CSV links of what is shown: url.Values-encoded queries, so
	// trusted as URLs by the template.
	BalancesCSV, DailyCSV, EntriesCSV template.URL
}

// chart is one provider and currency's daily activity of the accounts a
// finance team watches.
type chart struct {
	Provider, Currency string
	SVG                template.HTML
	Legend             []legendItem
}

type legendItem struct{ Account, Class string }

// chartAccounts are drawn, in this order, each with its series class.
var chartAccounts = []string{"sales", "refunds", "chargebacks", "fees"}

func (c *Console) ledger(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	now := c.cfg.Now().UTC()
	d := ledgerData{AsOf: q.Get("as_of"), Basis: q.Get("basis"), From: q.Get("from"), To: q.Get("to")}
	if d.AsOf == "" {
		d.AsOf = now.Format(time.RFC3339)
	}
	if d.Basis == "" {
		d.Basis = "effective"
	}
	if d.To == "" {
		d.To = now.Format(time.DateOnly)
	}
	if d.From == "" {
		d.From = now.AddDate(0, 0, -29).Format(time.DateOnly)
	}
	balancesQuery := url.Values{"as_of": {d.AsOf}, "basis": {d.Basis}}.Encode()
	dailyQuery := url.Values{"from": {d.From}, "to": {d.To}}.Encode()
	d.BalancesCSV = template.URL("/console/ledger/balances.csv?" + balancesQuery)
	d.DailyCSV = template.URL("/console/ledger/daily.csv?" + dailyQuery)
	d.EntriesCSV = template.URL("/console/ledger/entries.csv?" + dailyQuery)
	var bl struct {
		Balances []balance `json:"balances"`
	}
	var dl struct {
		Days []day `json:"days"`
	}
	if err := c.getJSON(r, s, "/v1/ledger/balances?"+balancesQuery, &bl); err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	if err := c.getJSON(r, s, "/v1/ledger/daily?"+dailyQuery, &dl); err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	d.Balances, d.Charts = bl.Balances, charts(dl.Days, d.From, d.To)
	c.render(w, r, http.StatusOK, "ledger", view{Title: "ledger.title", Nav: "ledger", Session: s, Data: d})
}

// ledgerCSV serves a ledger route's CSV exactly as the API answers it.
func (c *Console) ledgerCSV(w http.ResponseWriter, r *http.Request, s *session) {
	route := map[string]string{"balances.csv": "balances", "daily.csv": "daily", "entries.csv": "entries"}[r.PathValue("file")]
	if route == "" {
		c.notFound(w, r)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "/v1/ledger/"+route+"?"+r.URL.RawQuery, http.NoBody)
	if err != nil {
		c.fail(w, r, s, http.StatusBadRequest, "error.internal")
		return
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Accept", "text/csv")
	rec := &recorder{header: http.Header{}}
	c.cfg.API.ServeHTTP(rec, req)
	if rec.status/100 != 2 && rec.status != 0 {
		c.apiFailed(w, r, s, decodeAnswer(answer{status: rec.status, body: rec.body.Bytes()}, nil))
		return
	}
	for _, h := range []string{"Content-Type", "Content-Disposition"} {
		w.Header().Set(h, rec.header.Get(h))
	}
	_, _ = w.Write(rec.body.Bytes())
}

// charts draws one SVG per provider and currency: each watched account's
// activity per day on its normal side (a sale credits sales; refunds,
// chargebacks and fees are debits), days without activity at zero.
func charts(days []day, from, to string) []chart {
	start, err1 := time.Parse(time.DateOnly, from)
	end, err2 := time.Parse(time.DateOnly, to)
	if err1 != nil || err2 != nil || end.Before(start) {
		return nil
	}
	n := int(end.Sub(start).Hours()/24) + 1
	type key struct{ provider, currency string }
	series := map[key]map[string][]int64{}
	var keys []key
	for _, dd := range days {
		k := key{dd.Provider, dd.Currency}
		if series[k] == nil {
			series[k] = map[string][]int64{}
			keys = append(keys, k)
		}
		t, err := time.Parse(time.DateOnly, dd.Day)
		i := int(t.Sub(start).Hours() / 24)
		if err != nil || i < 0 || i >= n || !slices.Contains(chartAccounts, dd.Account) {
			continue
		}
		if series[k][dd.Account] == nil {
			series[k][dd.Account] = make([]int64, n)
		}
		v := dd.Debits - dd.Credits
		if dd.Account == "sales" {
			v = -v
		}
		series[k][dd.Account][i] += v
	}
	out := make([]chart, 0, len(keys))
	for _, k := range keys {
		out = append(out, chart{Provider: k.provider, Currency: k.currency, SVG: drawChart(series[k], n, start, k.currency)})
	}
	return out
}

// drawChart renders a line per account in a fixed viewBox; the SVG holds
// numbers and fixed words only, so it is safe to embed as is.
func drawChart(series map[string][]int64, n int, start time.Time, currency string) template.HTML {
	const w, h, pad = 720.0, 240.0, 40.0
	var top int64 = 1
	for _, vs := range series {
		for _, v := range vs {
			top = max(top, v)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %.0f %.0f" role="img" class="chart" preserveAspectRatio="none"><title>%s</title>`, w, h, template.HTMLEscapeString(currency))
	fmt.Fprintf(&b, `<line class="axis" x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f"/>`, pad, h-pad, w-pad/2, h-pad)
	fmt.Fprintf(&b, `<text class="tick" x="%.0f" y="%.0f">%s</text>`, pad, h-pad/3, start.Format(time.DateOnly))
	fmt.Fprintf(&b, `<text class="tick" x="%.0f" y="%.0f" text-anchor="end">%s</text>`, w-pad/2, h-pad/3, start.AddDate(0, 0, n-1).Format(time.DateOnly))
	fmt.Fprintf(&b, `<text class="tick" x="4" y="%.0f">%s</text>`, pad/2, template.HTMLEscapeString(money(top, currency)))
	for i, acct := range chartAccounts {
		vs := series[acct]
		if vs == nil {
			continue
		}
		var pts []string
		for j, v := range vs {
			x := pad + (w-1.5*pad)*float64(j)/float64(max(n-1, 1))
			y := (h - pad) - (h-1.5*pad)*float64(max(v, 0))/float64(top)
			pts = append(pts, strconv.FormatFloat(x, 'f', 1, 64)+","+strconv.FormatFloat(y, 'f', 1, 64))
		}
		fmt.Fprintf(&b, `<polyline class="series s%d" points="%s"/>`, i, strings.Join(pts, " "))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// reconciliationData is the reconciliation page.
type reconciliationData struct {
	Summary struct {
		Since     string `json:"since"`
		Providers []struct {
			Provider string           `json:"provider"`
			Checks   map[string]int64 `json:"checks"`
			InDoubt  []struct {
				Currency string `json:"currency"`
				Payments int64  `json:"payments"`
				Amount   int64  `json:"amount"`
				Oldest   string `json:"oldest_recorded_at"`
			} `json:"in_doubt"`
		} `json:"providers"`
	}
	Log struct {
		Checks []struct {
			Provider          string `json:"provider"`
			ProviderPaymentID string `json:"provider_payment_id"`
			CheckedAt         string `json:"checked_at"`
			Trigger           string `json:"trigger"`
			StatusBefore      string `json:"status_before"`
			StatusAfter       string `json:"status_after"`
			Outcome           string `json:"outcome"`
			Cause             string `json:"cause"`
			Error             string `json:"error"`
		} `json:"checks"`
	}
	Outcomes []string
	// Corrections counts the corrected checks of the last 30 days by UTC
	// day and cause, newest day first; More says the walk stopped short.
	Corrections []correctionDay
	Causes      []string
	More        bool
}

type correctionDay struct {
	Day     string
	ByCause map[string]int
}

// correctionCauses are the causes the API names (CorrectionCause).
var correctionCauses = []string{"missing_webhook", "diverged"}

// correctionPages bounds the walk of the corrected checks.
const correctionPages = 10

func (c *Console) reconciliation(w http.ResponseWriter, r *http.Request, s *session) {
	var d reconciliationData
	d.Outcomes, d.Causes = []string{"unchanged", "corrected", "not_found", "failed"}, correctionCauses
	if err := c.getJSON(r, s, "/v1/reconciliation/summary", &d.Summary); err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	if err := c.getJSON(r, s, "/v1/reconciliation/log?limit=100", &d.Log); err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	var err error
	if d.Corrections, d.More, err = c.corrections(r, s); err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	c.render(w, r, http.StatusOK, "reconciliation", view{Title: "recon.title", Nav: "reconciliation", Session: s, Data: d})
}

// gauge is one figure of the health page and the metric it comes from.
type gauge struct {
	Key, Metric, Labels, Value string
}

// healthMetrics are the health page's figures, by metric name.
var healthMetrics = []struct{ key, metric string }{
	{"health.lag", "payledger_projection_lag_seconds"},
	{"health.leader", "payledger_projection_leader"},
	{"health.parked", "payledger_parked_payments"},
	{"health.dead_letters", "payledger_dead_letters"},
	{"health.reviews", "payledger_reviews_open"},
	{"health.in_doubt", "payledger_payments_in_doubt"},
	{"health.breaker", "payledger_reconciliation_breaker_open"},
	{"health.jobs", "payledger_jobs"},
}

// health reads this process's /metrics and shows the figures an operator
// watches, each with its metric; a figure this process does not export
// (another role runs elsewhere) says so.
func (c *Console) health(w http.ResponseWriter, r *http.Request, s *session) {
	a, err := c.call(r, s, http.MethodGet, "/metrics", nil)
	if err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	var gauges []gauge
	for _, hm := range healthMetrics {
		found := false
		sc := bufio.NewScanner(bytes.NewReader(a.body))
		for sc.Scan() {
			line := sc.Text()
			name, rest, ok := strings.Cut(line, " ")
			labels := ""
			if i := strings.IndexByte(name, '{'); i >= 0 {
				name, labels = name[:i], strings.TrimSuffix(line[i+1:strings.LastIndexByte(line, '}')], "}")
				rest = strings.TrimSpace(line[strings.LastIndexByte(line, '}')+1:])
				ok = true
			}
			if ok && name == hm.metric {
				gauges, found = append(gauges, gauge{Key: hm.key, Metric: hm.metric, Labels: labels, Value: rest}), true
			}
		}
		if !found {
			gauges = append(gauges, gauge{Key: hm.key, Metric: hm.metric, Value: ""})
		}
	}
	c.render(w, r, http.StatusOK, "health", view{Title: "health.title", Nav: "health", Session: s, Data: gauges})
}

// corrections walks the corrected checks of the last 30 days (newest
// first, at most correctionPages pages) and counts them by day and cause.
func (c *Console) corrections(r *http.Request, s *session) ([]correctionDay, bool, error) {
	since := c.cfg.Now().UTC().AddDate(0, 0, -30).Format(time.RFC3339)
	var days []correctionDay
	cursor := ""
	for range correctionPages {
		q := url.Values{"outcome": {"corrected"}, "since": {since}, "limit": {"500"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page struct {
			Checks []struct {
				CheckedAt string `json:"checked_at"`
				Cause     string `json:"cause"`
			} `json:"checks"`
			NextCursor string `json:"next_cursor"`
		}
		if err := c.getJSON(r, s, "/v1/reconciliation/log?"+q.Encode(), &page); err != nil {
			return nil, false, err
		}
		for _, ck := range page.Checks {
			day := ck.CheckedAt[:min(10, len(ck.CheckedAt))]
			if len(days) == 0 || days[len(days)-1].Day != day {
				days = append(days, correctionDay{Day: day, ByCause: map[string]int{}})
			}
			days[len(days)-1].ByCause[ck.Cause]++
		}
		if page.NextCursor == "" {
			return days, false, nil
		}
		cursor = page.NextCursor
	}
	return days, true, nil
}
