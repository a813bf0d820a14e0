package asaas

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

const opList = "asaas: list payments"

// pageLimit is the largest page GET /v3/payments serves (provider-apis.md
// §3.1: limit 1–100).
const pageLimit = 100

// A listing has two phases: the payments created in the window, then those
// paid in it. Asaas has no "updated since" filter (§3.1).
const (
	phaseCreated = "created"
	phasePaid    = "paid"
)

// phaseFilter is the date filter of each phase.
var phaseFilter = map[string]string{phaseCreated: "dateCreated", phasePaid: "paymentDate"}

// listPage is an answer of GET /v3/payments.
type listPage struct {
	Data    []json.RawMessage `json:"data"`
	HasMore *bool             `json:"hasMore"`
}

// cursor is where a listing stands: its phase and the offset in it.
type cursor struct {
	phase  string
	offset int64
}

// Coverage is providers.CoverageCreatedOrPaid: a refund or chargeback of a
// payment created and paid before the window is left to the reconciler.
func (c *StatusClient) Coverage() providers.Coverage { return providers.CoverageCreatedOrPaid }

// ListPage lists one page of the payments created in w, then of those paid
// in it, each mapped exactly as Observe maps the payment (a deleted one as
// cancelled), so a payment listed unchanged is the fact a status fetch
// stored, and one listed in both phases is one fact. Cursor "" is the first
// page.
func (c *StatusClient) ListPage(ctx context.Context, w providers.Window, cur string) (providers.Page, error) {
	if !w.Since.Before(w.Until) {
		return providers.Page{}, domain.Invalid(opList, "the window is empty", nil)
	}
	at, err := parseCursor(cur)
	if err != nil {
		return providers.Page{}, err
	}
	var raw json.RawMessage
	label := at.phase + " offset " + strconv.FormatInt(at.offset, 10)
	if err := c.api.GetJSON(ctx, c.listPath(w, at), label, &raw); err != nil {
		return providers.Page{}, fmt.Errorf("%s: %w", opList, err)
	}
	return c.decodeListPage(raw, at)
}

// listPath asks for the page at of the payments whose phase's date falls in
// w. Asaas filters by calendar day in São Paulo wall time, the zone it
// writes dates in, so the listed days cover the window and may list
// payments slightly outside it: harmless, they are facts already stored or
// true ones.
func (c *StatusClient) listPath(w providers.Window, at cursor) string {
	field := phaseFilter[at.phase]
	q := url.Values{
		field + "[ge]": {w.Since.In(c.loc).Format(time.DateOnly)},
		field + "[le]": {w.Until.Add(-time.Nanosecond).In(c.loc).Format(time.DateOnly)},
		"offset":       {strconv.FormatInt(at.offset, 10)},
		"limit":        {strconv.Itoa(pageLimit)},
	}
	return "/v3/payments?" + q.Encode()
}

// decodeListPage maps an answer listed from at.
func (c *StatusClient) decodeListPage(body []byte, at cursor) (providers.Page, error) {
	var lp listPage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&lp); err != nil {
		return providers.Page{}, domain.Invalid(opList, domain.MessageOf(decodeError("payment list", err)), err)
	}
	if lp.Data == nil || lp.HasMore == nil {
		return providers.Page{}, domain.Invalid(opList, "the page has no data or hasMore", nil)
	}
	if *lp.HasMore && len(lp.Data) == 0 {
		return providers.Page{}, domain.Invalid(opList, "an empty page says it has more", nil)
	}
	page := providers.Page{Notifications: make([]domain.Notification, 0, len(lp.Data))}
	for i, raw := range lp.Data {
		n, err := c.listed(raw, fmt.Sprintf("%s: data[%d] (%s offset %d)", opList, i, at.phase, at.offset+int64(i)))
		if err != nil {
			return providers.Page{}, err
		}
		page.Notifications = append(page.Notifications, n)
	}
	switch {
	case *lp.HasMore:
		page.Next = cursor{phase: at.phase, offset: at.offset + int64(len(lp.Data))}.String()
	case at.phase == phaseCreated:
		page.Next = cursor{phase: phasePaid}.String()
	}
	return page, nil
}

// listed maps one payment object of a page as Observe maps a fetched one;
// op names it in errors.
func (c *StatusClient) listed(raw json.RawMessage, op string) (domain.Notification, error) {
	var pay payment
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&pay); err != nil {
		return domain.Notification{}, domain.Invalid(op, domain.MessageOf(decodeError("payment", err)), err)
	}
	if err := checkAnswer(op, pay); err != nil {
		return domain.Notification{}, err
	}
	obs, err := c.observe(op+" payment "+strconv.Quote(pay.ID), pay)
	if err != nil {
		return domain.Notification{}, err
	}
	return domain.Notification{Provider: ProviderName, ProviderEventID: obs.ProviderEventID,
		ProviderEventType: EventTypeAPIPayment, Events: []domain.Event{obs}}, nil
}

// String encodes the cursor as a query string, readable in logs.
func (c cursor) String() string {
	return "phase=" + c.phase + "&offset=" + strconv.FormatInt(c.offset, 10)
}

// parseCursor reads a cursor; "" is the first page of the created phase.
func parseCursor(s string) (cursor, error) {
	if s == "" {
		return cursor{phase: phaseCreated}, nil
	}
	q, err := url.ParseQuery(s)
	off, offErr := strconv.ParseInt(q.Get("offset"), 10, 64)
	if err != nil || len(q) != 2 || len(q["phase"]) != 1 || len(q["offset"]) != 1 || phaseFilter[q.Get("phase")] == "" ||
		offErr != nil || off < 0 || strconv.FormatInt(off, 10) != q.Get("offset") {
		return cursor{}, domain.Invalid(opList, "cursor "+strconv.Quote(truncate(s))+" is not phase=created|paid&offset=n", nil)
	}
	return cursor{phase: q.Get("phase"), offset: off}, nil
}
