package mercadopago

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

const opList = "mercadopago: list payments"

// Search limits (provider-apis.md §2.1): at most 50 results a page, and an
// offset of at most 10 000; past it the search starts again from the last
// listed update time.
const (
	pageLimit = 50
	maxOffset = 10000
)

// searchTime is the date format the search accepts
// ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", error 1001; the docs' example has a colon
// in the offset).
const searchTime = "2006-01-02T15:04:05.000-07:00"

// searchPage is an answer of GET /v1/payments/search.
type searchPage struct {
	Results []json.RawMessage `json:"results"`
	Paging  *struct {
		Total  *int64 `json:"total"`
		Limit  int64  `json:"limit"`
		Offset int64  `json:"offset"`
	} `json:"paging"`
}

// listed is what a page needs of each result beyond its observation.
type listed struct {
	ID              any    `json:"id"`
	DateLastUpdated string `json:"date_last_updated"`
}

// cursor is where a listing stands: the search's begin_date (the window's
// start, or the last update time listed before the offset cap) and offset.
type cursor struct {
	from   time.Time
	offset int64
}

// Coverage is providers.CoverageChanges: the search by date_last_updated
// lists every payment that changed in the window.
func (c *StatusClient) Coverage() providers.Coverage { return providers.CoverageChanges }

// ListPage lists one page of the payments updated in w, oldest update first,
// each mapped exactly as Observe maps the payment, so a payment listed
// unchanged is the fact a status fetch stored. Cursor "" is the first page.
func (c *StatusClient) ListPage(ctx context.Context, w providers.Window, cur string) (providers.Page, error) {
	if !w.Since.Before(w.Until) {
		return providers.Page{}, domain.Invalid(opList, "the window is empty", nil)
	}
	at, err := parseCursor(cur, w)
	if err != nil {
		return providers.Page{}, err
	}
	var raw json.RawMessage
	if err := c.api.GetJSON(ctx, searchPath(w, at), "search offset "+strconv.FormatInt(at.offset, 10), &raw); err != nil {
		return providers.Page{}, fmt.Errorf("%s: %w", opList, err)
	}
	return decodeSearchPage(raw, at, c.api.Now())
}

// searchPath is the search for the payments updated in w from at on.
// end_date is the window's last millisecond: Until is excluded.
func searchPath(w providers.Window, at cursor) string {
	last := w.Until.Add(time.Millisecond - 1).Truncate(time.Millisecond).Add(-time.Millisecond)
	q := url.Values{
		"range":      {"date_last_updated"},
		"sort":       {"date_last_updated"},
		"criteria":   {"asc"},
		"begin_date": {at.from.UTC().Truncate(time.Millisecond).Format(searchTime)},
		"end_date":   {last.UTC().Format(searchTime)},
		"offset":     {strconv.FormatInt(at.offset, 10)},
		"limit":      {strconv.Itoa(pageLimit)},
	}
	return "/v1/payments/search?" + q.Encode()
}

// decodeSearchPage maps a search answer listed from at; now stamps a
// result without date_last_updated, as Observe does.
func decodeSearchPage(body []byte, at cursor, now time.Time) (providers.Page, error) {
	var sp searchPage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&sp); err != nil {
		return providers.Page{}, decodeError(opList, "search page", err)
	}
	if sp.Results == nil || sp.Paging == nil || sp.Paging.Total == nil || *sp.Paging.Total < 0 {
		return providers.Page{}, domain.Invalid(opList, "the search page has no results or paging.total", nil)
	}
	page := providers.Page{Notifications: make([]domain.Notification, 0, len(sp.Results))}
	var lastUpdated time.Time
	for i, r := range sp.Results {
		n, updated, err := listedNotification(r, now)
		if err != nil {
			return providers.Page{}, fmt.Errorf("%s: results[%d] (offset %d): %w", opList, i, at.offset+int64(i), err)
		}
		page.Notifications = append(page.Notifications, n)
		lastUpdated = updated
	}
	next, more, err := nextCursor(at, int64(len(sp.Results)), *sp.Paging.Total, lastUpdated)
	if err != nil || !more {
		return page, err
	}
	page.Next = next.String()
	return page, nil
}

// listedNotification maps one result as Observe maps a fetched payment,
// and returns its date_last_updated (zero when absent).
func listedNotification(raw json.RawMessage, now time.Time) (domain.Notification, time.Time, error) {
	var l listed
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&l); err != nil {
		return domain.Notification{}, time.Time{}, decodeError(opObserve, "payment", err)
	}
	id, err := idString("id", l.ID)
	if err != nil {
		return domain.Notification{}, time.Time{}, err
	}
	if id == "" {
		return domain.Notification{}, time.Time{}, invalid("id is missing")
	}
	facts, err := observeFacts(raw, id, now)
	if err != nil {
		return domain.Notification{}, time.Time{}, fmt.Errorf("payment %s: %w", id, err)
	}
	var updated time.Time
	if l.DateLastUpdated != "" {
		updated = facts[0].EventMeta().OccurredAt
	}
	return domain.Notification{Provider: ProviderName, ProviderEventID: facts[0].EventMeta().ProviderEventID,
		ProviderEventType: EventTypeAPIPayment, Events: facts}, updated, nil
}

// nextCursor is the page after n results listed from at, of total; more is
// false after the last. Past the offset cap the search starts again one
// millisecond before the last listed update (begin_date's inclusiveness is
// not documented): results listed twice are the same facts.
func nextCursor(at cursor, n, total int64, lastUpdated time.Time) (cursor, bool, error) {
	next := cursor{from: at.from, offset: at.offset + n}
	if n == 0 || next.offset >= total {
		return cursor{}, false, nil
	}
	if next.offset+pageLimit <= maxOffset {
		return next, true, nil
	}
	from := lastUpdated.Add(-time.Millisecond)
	if lastUpdated.IsZero() || !from.After(at.from) {
		return cursor{}, false, domain.Invalid(opList, fmt.Sprintf("more than %d payments updated at %s: split the window",
			maxOffset, at.from.Format(searchTime)), nil)
	}
	return cursor{from: from}, true, nil
}

// String encodes the cursor as a query string: readable in logs, and
// parsed strictly.
func (c cursor) String() string {
	return url.Values{"from": {c.from.UTC().Format(time.RFC3339Nano)}, "offset": {strconv.FormatInt(c.offset, 10)}}.Encode()
}

// parseCursor reads a cursor of w; "" is the first page.
func parseCursor(s string, w providers.Window) (cursor, error) {
	if s == "" {
		return cursor{from: w.Since}, nil
	}
	bad := func(why string) (cursor, error) {
		return cursor{}, domain.Invalid(opList, "cursor "+strconv.Quote(truncate(s))+" "+why, nil)
	}
	q, err := url.ParseQuery(s)
	if err != nil || len(q) != 2 || len(q["from"]) != 1 || len(q["offset"]) != 1 {
		return bad("is not from=…&offset=…")
	}
	from, err := time.Parse(time.RFC3339Nano, q.Get("from"))
	if err != nil || from.Before(w.Since) || !from.Before(w.Until) {
		return bad("has a start outside the window")
	}
	off, err := strconv.ParseInt(q.Get("offset"), 10, 64)
	if err != nil || off < 0 || off+pageLimit > maxOffset || strconv.FormatInt(off, 10) != q.Get("offset") {
		return bad("has a bad offset")
	}
	return cursor{from: from, offset: off}, nil
}
