package pagarme

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

const opList = "pagarme: list charges"

// pageSize is the size asked of GET /charges. Pagar.me documents no default
// or maximum (provider-apis.md §4.1 [UNVERIFIED]); 30 is modest, and at the
// 200 list calls a minute it allows is 6 000 charges a minute.
const pageSize = 30

// listPage is an answer of GET /charges.
type listPage struct {
	Data   []json.RawMessage `json:"data"`
	Paging *struct {
		// Next is a ready-made URL, null after the last page. The cursor is
		// the page number instead: the client only calls its base URL.
		Next *string `json:"next"`
	} `json:"paging"`
}

// Coverage is providers.CoverageCreated: a later change of a charge
// created before the window is left to the reconciler.
func (c *StatusClient) Coverage() providers.Coverage { return providers.CoverageCreated }

// ListPage lists one page of the charges created in w, each mapped exactly
// as FetchStatus maps the charge, so a charge listed unchanged is the fact
// a status fetch stored. Cursor "" is the first page.
func (c *StatusClient) ListPage(ctx context.Context, w providers.Window, cur string) (providers.Page, error) {
	if !w.Since.Before(w.Until) {
		return providers.Page{}, domain.Invalid(opList, "the window is empty", nil)
	}
	page, err := parseCursor(cur)
	if err != nil {
		return providers.Page{}, err
	}
	var raw json.RawMessage
	if err := c.api.GetJSON(ctx, listPath(w, page), "list page "+strconv.Itoa(page), &raw); err != nil {
		return providers.Page{}, fmt.Errorf("%s: %w", opList, err)
	}
	return c.decodeListPage(raw, page)
}

// listPath asks for page of the charges created in w, in whole seconds
// (RFC 3339, as Pagar.me's SDK formats them) rounded outwards: a charge
// listed from just outside the window is a fact anyway.
func listPath(w providers.Window, page int) string {
	until := w.Until.Add(time.Second - 1).Truncate(time.Second)
	q := url.Values{
		"created_since": {w.Since.UTC().Truncate(time.Second).Format(time.RFC3339)},
		"created_until": {until.UTC().Format(time.RFC3339)},
		"page":          {strconv.Itoa(page)},
		"size":          {strconv.Itoa(pageSize)},
	}
	return "charges?" + q.Encode()
}

// decodeListPage maps an answer for page.
func (c *StatusClient) decodeListPage(body []byte, page int) (providers.Page, error) {
	var lp listPage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&lp); err != nil {
		return providers.Page{}, domain.Invalid(opList, domain.MessageOf(decodeError("charge list", "", err)), err)
	}
	if lp.Data == nil || lp.Paging == nil {
		return providers.Page{}, domain.Invalid(opList, "the page has no data or paging", nil)
	}
	out := providers.Page{Notifications: make([]domain.Notification, 0, len(lp.Data))}
	for i, raw := range lp.Data {
		prefix := "data[" + strconv.Itoa(i) + "]."
		var ch charge
		if err := json.Unmarshal(raw, &ch); err != nil {
			return providers.Page{}, fmt.Errorf("%s: page %d: %w", opList, page, decodeError("charge", prefix, err))
		}
		obs, err := c.observeFetched(ch, prefix)
		if err != nil {
			return providers.Page{}, fmt.Errorf("%s: page %d charge %s: %w", opList, page, quote(ch.ID), err)
		}
		out.Notifications = append(out.Notifications, domain.Notification{Provider: ProviderName,
			ProviderEventID: obs.ProviderEventID, ProviderEventType: EventTypeAPICharge, Events: []domain.Event{obs}})
	}
	// An empty page that names a next one would never end.
	if lp.Paging.Next != nil && *lp.Paging.Next != "" && len(lp.Data) > 0 {
		out.Next = "page=" + strconv.Itoa(page+1)
	}
	return out, nil
}

// parseCursor reads a cursor, "page=n" with n ≥ 2; "" is page 1.
func parseCursor(s string) (int, error) {
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(s, "page="))
	if err != nil || !strings.HasPrefix(s, "page=") || n < 2 || "page="+strconv.Itoa(n) != s {
		return 0, domain.Invalid(opList, "cursor "+quote(s)+" is not page=n", nil)
	}
	return n, nil
}
