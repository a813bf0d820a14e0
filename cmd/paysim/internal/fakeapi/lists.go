package fakeapi

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// mpError is Mercado Pago's error envelope with one cause (§2.1 of the
// provider API notes: 1000 rows exceeded, 1001 date format, 1003 sort,
// 1004 criteria).
func mpError(code int, desc string) (int, []byte) {
	return http.StatusBadRequest, marshal(map[string]any{"message": desc, "error": "bad_request", "status": 400,
		"cause": []any{map[string]any{"code": code, "description": desc}}})
}

// mpTime parses a search bound: yyyy-MM-dd'T'HH:mm:ss.SSSZ, with or
// without the milliseconds, the offset as -04:00, -0400 or Z.
func mpTime(s string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// mercadoPagoSearch answers GET /v1/payments/search: the payments seen so
// far, each as GET /v1/payments/{id} shows it now, whose range field
// (date_created, the default, or date_last_updated) lies in
// [begin_date, end_date], ordered by sort (required: date_created,
// date_last_updated or id) and criteria (required: asc or desc), paged by
// offset (≤ 10000) and limit (≤ 50, default 30).
func (a *API) mercadoPagoSearch(r *http.Request) (int, []byte) {
	q := r.URL.Query()
	field := map[string]func(facts) time.Time{
		"date_created":      func(f facts) time.Time { return f.created },
		"date_last_updated": func(f facts) time.Time { return f.updated },
	}
	rangeBy, ok := field[cmp.Or(q.Get("range"), "date_created")]
	if !ok {
		return mpError(1001, "Invalid range: "+q.Get("range"))
	}
	sortBy := q.Get("sort")
	if _, known := field[sortBy]; !known && sortBy != "id" {
		return mpError(1003, "Invalid sort: "+sortBy)
	}
	criteria := q.Get("criteria")
	if criteria != "asc" && criteria != "desc" {
		return mpError(1004, "Invalid criteria: "+criteria)
	}
	var bounds [2]time.Time
	for i, name := range []string{"begin_date", "end_date"} {
		if s := q.Get(name); s != "" {
			t, ok := mpTime(s)
			if !ok {
				return mpError(1001, "Date format must be yyyy-MM-dd'T'HH:mm:ss.SSSZ")
			}
			bounds[i] = t
		}
	}
	offset, okOff := intParam(q, "offset", 0)
	limit, okLim := intParam(q, "limit", 30)
	if !okOff || !okLim || offset < 0 || offset > 10000 || limit < 1 || limit > 50 {
		return mpError(1000, "Number of rows exceeded the limits")
	}
	var rs []ref
	for _, v := range a.visible(truth.MercadoPago) {
		t := rangeBy(a.lists.facts[v.p][v.step])
		if (bounds[0].IsZero() || !t.Before(bounds[0])) && (bounds[1].IsZero() || !t.After(bounds[1])) {
			rs = append(rs, v)
		}
	}
	key := func(v ref) int64 {
		if by, ok := field[sortBy]; ok {
			return by(a.lists.facts[v.p][v.step]).UnixNano()
		}
		id, _ := strconv.ParseInt(v.p.ID, 10, 64)
		return id
	}
	slices.SortStableFunc(rs, func(x, y ref) int {
		c := cmp.Or(cmp.Compare(key(x), key(y)), cmp.Compare(x.i, y.i))
		if criteria == "desc" {
			return -c
		}
		return c
	})
	got, _ := page(rs, offset, limit)
	return http.StatusOK, marshal(map[string]any{"paging": map[string]any{"total": len(rs), "limit": limit, "offset": offset},
		"results": rawList(got)})
}

// intParam reads an integer parameter, def when absent.
func intParam(q url.Values, name string, def int) (int, bool) {
	s := q.Get(name)
	if s == "" {
		return def, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// asaasError is Asaas's error envelope.
func asaasError(desc string) (int, []byte) {
	return http.StatusBadRequest, marshal(map[string]any{"errors": []any{map[string]any{"code": "invalid_action", "description": desc}}})
}

// asaasList answers GET /v3/payments: the payments seen so far as they are
// now, filtered by dateCreated[ge]/[le] and paymentDate[ge]/[le]
// (YYYY-MM-DD, inclusive; a payment not paid has no paymentDate), paged by
// offset and limit (1 to 100, default 10). Asaas documents no order: paysim
// lists the newest first, so payments created while a backfill pages shift
// later pages (the backfill sees duplicates, never a gap, only if it pages
// a closed window).
func (a *API) asaasList(r *http.Request) (int, []byte) {
	q := r.URL.Query()
	var bounds [4]string
	for i, name := range []string{"dateCreated[ge]", "dateCreated[le]", "paymentDate[ge]", "paymentDate[le]"} {
		if s := q.Get(name); s != "" {
			if _, err := time.Parse(time.DateOnly, s); err != nil {
				return asaasError("Invalid date for " + name + ": " + s)
			}
			bounds[i] = s
		}
	}
	in := func(day, ge, le string) bool { return (ge == "" || day >= ge) && (le == "" || day <= le) }
	offset, okOff := intParam(q, "offset", 0)
	limit, okLim := intParam(q, "limit", 10)
	if !okOff || !okLim || offset < 0 || limit < 1 || limit > 100 {
		return asaasError("limit must be between 1 and 100 and offset not negative")
	}
	var rs []ref
	for _, v := range a.visible(truth.Asaas) {
		f := a.lists.facts[v.p][v.step]
		paid := bounds[2] == "" && bounds[3] == "" || f.paidDay != "" && in(f.paidDay, bounds[2], bounds[3])
		if in(f.day, bounds[0], bounds[1]) && paid {
			rs = append(rs, v)
		}
	}
	slices.SortStableFunc(rs, func(x, y ref) int {
		return cmp.Or(cmp.Compare(a.lists.facts[y.p][y.step].day, a.lists.facts[x.p][x.step].day), cmp.Compare(y.i, x.i))
	})
	got, more := page(rs, offset, limit)
	return http.StatusOK, marshal(map[string]any{"object": "list", "hasMore": more, "totalCount": len(rs),
		"limit": limit, "offset": offset, "data": rawList(got)})
}

// pagarmeList answers GET /core/v5/charges: the charges seen so far as
// they are now, created_at in [created_since, created_until] (RFC 3339),
// newest first (undocumented; paysim's choice), paged by page (from 1) and
// size (1 to 100, default 10; Pagar.me documents no maximum), with
// paging.next and paging.previous as ready-made URLs (null at the ends)
// and paging.total the number of charges (§4.1 of the provider API notes).
func (a *API) pagarmeList(r *http.Request) (int, []byte) {
	q := r.URL.Query()
	invalid := func(field, msg string) (int, []byte) {
		return http.StatusUnprocessableEntity, marshal(map[string]any{"message": "The request is invalid.",
			"errors": map[string]any{field: []string{msg}}})
	}
	var bounds [2]time.Time
	for i, name := range []string{"created_since", "created_until"} {
		if s := q.Get(name); s != "" {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return invalid(name, "The field "+name+" must be a date.")
			}
			bounds[i] = t
		}
	}
	pg, okPage := intParam(q, "page", 1)
	size, okSize := intParam(q, "size", 10)
	if !okPage || pg < 1 {
		return invalid("page", "The field page must be at least 1.")
	}
	if !okSize || size < 1 || size > 100 {
		return invalid("size", "The field size must be between 1 and 100.")
	}
	var rs []ref
	for _, v := range a.visible(truth.Pagarme) {
		t := a.lists.facts[v.p][v.step].created
		if (bounds[0].IsZero() || !t.Before(bounds[0])) && (bounds[1].IsZero() || !t.After(bounds[1])) {
			rs = append(rs, v)
		}
	}
	slices.SortStableFunc(rs, func(x, y ref) int {
		return cmp.Or(a.lists.facts[y.p][y.step].created.Compare(a.lists.facts[x.p][x.step].created), cmp.Compare(y.i, x.i))
	})
	got, more := page(rs, (pg-1)*size, size)
	link := func(n int) any {
		u := *r.URL
		v := u.Query()
		v.Set("page", strconv.Itoa(n))
		v.Set("size", strconv.Itoa(size))
		u.RawQuery = v.Encode()
		return "http://" + r.Host + u.RequestURI()
	}
	paging := map[string]any{"total": len(rs), "previous": nil, "next": nil}
	if pg > 1 {
		paging["previous"] = link(pg - 1)
	}
	if more {
		paging["next"] = link(pg + 1)
	}
	return http.StatusOK, marshal(map[string]any{"data": json.RawMessage(rawList(got)), "paging": paging})
}
