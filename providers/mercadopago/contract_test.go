package mercadopago

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/providertest"
)

var (
	_ providertest.Provider      = (*Provider)(nil)
	_ providertest.Authenticator = (*Provider)(nil)
	_ providertest.StatusFetcher = (*StatusClient)(nil)
	_ providertest.Lister        = (*StatusClient)(nil)
)

// TestContract runs the suite with a freshness window, which is off by
// default, so that stale deliveries are part of the contract too.
func TestContract(t *testing.T) {
	p := newProvider(t, Config{Secrets: []string{vectorSecret}, MaxAge: time.Hour})
	providertest.Run(t, p, contractVectors(t))
}

func contractVectors(t *testing.T) providertest.Vectors {
	body := vectorBody(t)
	at := time.Unix(1704908010, 0)
	const ord, ordReq, ordTS = "ORD01JQ4S4KY8HWQ6NA5PXB65B3D3", "2066ca19-c6f1-498a-be75-1923005edd06", "1742505638683"
	ordAt := time.UnixMilli(1742505638683)
	ordBody := []byte(`{"id":"8","type":"order","action":"order.processed","data":{"id":"` + ord + `"}}`)
	sign := func(dataID, reqID, ts string) string { return Sign(vectorSecret, dataID, reqID, ts) }
	spec := delivery("spec MP-B", vectorHeader, vectorRequestID, vectorDataID, body, at)
	twice := delivery("data.id twice", vectorHeader, vectorRequestID, vectorDataID, body, at)
	twice.Query = url.Values{QueryDataID: {vectorDataID, "1"}}
	reject := func(c providertest.Class, d providertest.Delivery, cause error) providertest.Rejected {
		return providertest.Rejected{Delivery: d, Class: c, Kind: domain.KindInvalid, Err: cause}
	}
	return providertest.Vectors{
		Accepted: []providertest.Accepted{{Delivery: spec, Want: []domain.Event{notified("12345", "payment", vectorDataID, "payment.created",
			time.Date(2015, 3, 25, 14, 4, 58, 396_000_000, time.UTC))}}},
		Ignored: []providertest.Delivery{
			delivery("Orders API, data.id signed lower-cased", sign(strings.ToLower(ord), ordReq, ordTS), ordReq, ord, ordBody, ordAt),
			delivery("merchant order", sign("555", vectorRequestID, vectorTS), vectorRequestID, "555",
				[]byte(`{"id":"8","type":"merchant_order","data":{"id":"555"}}`), at),
		},
		Rejected: []providertest.Rejected{
			reject(providertest.Forged, delivery("another data.id", vectorHeader, vectorRequestID, "999999998", body, at), ErrNoValidSignature),
			reject(providertest.Forged, delivery("another request id", vectorHeader, "bb56a2f1-6aae-46ac-982e-9dcd3581d08f", vectorDataID, body, at), ErrNoValidSignature),
			reject(providertest.Forged, delivery("another secret", Sign("other", vectorDataID, vectorRequestID, vectorTS), vectorRequestID, vectorDataID, body, at), ErrNoValidSignature),
			reject(providertest.Stale, delivery("past the maximum age", vectorHeader, vectorRequestID, vectorDataID, body, at.Add(time.Hour+1)), ErrTooOld),
			reject(providertest.Stale, delivery("milliseconds ts past the maximum age", sign(ord, ordReq, ordTS), ordReq, ord, ordBody, ordAt.Add(time.Hour+time.Millisecond)), ErrTooOld),
			reject(providertest.Truncated, delivery("signature cut to 62 digits", "ts="+vectorTS+",v1="+vectorV1[:62], vectorRequestID, vectorDataID, body, at), ErrNoValidSignature),
			reject(providertest.Truncated, delivery("no v1", "ts="+vectorTS, vectorRequestID, vectorDataID, body, at), ErrNoValidSignature),
			reject(providertest.Truncated, delivery("no ts", "v1="+vectorV1, vectorRequestID, vectorDataID, body, at), ErrInvalidHeader),
			reject(providertest.Truncated, delivery("no x-request-id", vectorHeader, "", vectorDataID, body, at), ErrNoValidSignature),
			reject(providertest.Recased, delivery("lower-case id signed upper-cased", sign(ord, ordReq, ordTS), ordReq, strings.ToLower(ord), ordBody, ordAt), ErrNoValidSignature),
			reject(providertest.Recased, delivery("id signed in another mix of cases", sign("Ord01jq4s4ky8hwq6na5pxb65b3d3", ordReq, ordTS), ordReq, ord, ordBody, ordAt), ErrNoValidSignature),
			reject(providertest.Recased, delivery("upper-cased request id", vectorHeader, strings.ToUpper(vectorRequestID), vectorDataID, body, at), ErrNoValidSignature),
			reject(providertest.Unsigned, delivery("no x-signature", "", vectorRequestID, vectorDataID, body, at), ErrNotSigned),
			reject(providertest.Malformed, delivery("ts=abc", "ts=abc,v1="+vectorV1, vectorRequestID, vectorDataID, body, at), ErrInvalidHeader),
			reject(providertest.Malformed, twice, ErrInvalidQuery),
		},
		SignedHeaders: []string{Header, RequestIDHeader},
		SignedQuery:   []string{QueryDataID},
		RejectKind:    domain.KindInvalid,
		Secrets:       []string{vectorSecret},
	}
}

// delivery is a notification as Mercado Pago sends it; empty header values
// and data.id are left out.
func delivery(name, sig, requestID, dataID string, body []byte, now time.Time) providertest.Delivery {
	return providertest.Delivery{Name: name, Header: headers(sig, requestID), Query: queryOf(dataID), Body: body, Now: now}
}
