package mercadopago

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func TestVerify(t *testing.T) {
	body := vectorBody(t)
	signedAt := time.Unix(1704908010, 0)
	const ord = "ORD01JQ4S4KY8HWQ6NA5PXB65B3D3" // Orders docs example
	const ordReq = "2066ca19-c6f1-498a-be75-1923005edd06"
	const ordTS = "1742505638683" // milliseconds
	ordAt := time.UnixMilli(1742505638683)
	sign := func(dataID, reqID, ts string) string { return Sign(vectorSecret, dataID, reqID, ts) }
	tests := []struct {
		name    string
		secrets []string // default: the vector's secret
		maxAge  time.Duration
		header  http.Header
		query   url.Values
		body    []byte // default: the vector payload
		now     time.Time
		wantErr error  // nil: accepted
		wantMsg string // part of the client-safe message
	}{
		{name: "MP-B vector", header: headers(vectorHeader, vectorRequestID), query: queryOf(vectorDataID), now: signedAt},
		{name: "MP-B vector by the real clock: no freshness check by default", header: headers(vectorHeader, vectorRequestID),
			query: queryOf(vectorDataID), now: time.Now()},
		{name: "the body is not signed", header: headers(vectorHeader, vectorRequestID), query: queryOf(vectorDataID),
			body: []byte(`{"anything":"else"}`), now: signedAt},
		{name: "header keys re-cased and spaced, as the SDKs parse", header: headers(" TS = "+vectorTS+" , V1 = "+vectorV1+" ", vectorRequestID),
			query: queryOf(vectorDataID), now: signedAt},
		{name: "upper-case hex", header: headers("ts="+vectorTS+",v1="+strings.ToUpper(vectorV1), vectorRequestID), query: queryOf(vectorDataID), now: signedAt},
		{name: "v1 after unknown keys and a v2", header: headers("v2=abc,foo=bar,ts="+vectorTS+",v1="+vectorV1, vectorRequestID),
			query: queryOf(vectorDataID), now: signedAt},
		{name: "one of two v1 matches", header: headers("ts="+vectorTS+",v1="+strings.Repeat("00", 32)+",v1="+vectorV1, vectorRequestID),
			query: queryOf(vectorDataID), now: signedAt},
		{name: "x-request-id and data.id are trimmed, as the SDKs do", header: headers(vectorHeader, " "+vectorRequestID+" "),
			query: queryOf(" " + vectorDataID + " "), now: signedAt},

		// Secrets.
		{name: "rotation: second secret matches", secrets: []string{"new_secret", vectorSecret},
			header: headers(vectorHeader, vectorRequestID), query: queryOf(vectorDataID), now: signedAt},
		{name: "forged: no secret matches", secrets: []string{"new_secret", "old_secret"}, header: headers(vectorHeader, vectorRequestID),
			query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature, wantMsg: "matches a configured secret"},

		// Forged and truncated.
		{name: "another data.id", header: headers(vectorHeader, vectorRequestID), query: queryOf("999999998"), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "another request id", header: headers(vectorHeader, "bb56a2f1-6aae-46ac-982e-9dcd3581d08f"), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "another ts", header: headers("ts=1704908011,v1="+vectorV1, vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "ts in milliseconds is another string", header: headers("ts=1704908010000,v1="+vectorV1, vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "truncated signature", header: headers("ts="+vectorTS+",v1="+vectorV1[:62], vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "odd-length signature", header: headers("ts="+vectorTS+",v1="+vectorV1[:63], vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "truncated header: no v1", header: headers("ts="+vectorTS, vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature, wantMsg: "no valid v1"},
		{name: "truncated header: no ts", header: headers("v1="+vectorV1, vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrInvalidHeader, wantMsg: "no ts"},
		{name: "truncated ts", header: headers("ts=17049,v1="+vectorV1, vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "v2 only", header: headers("ts="+vectorTS+",v2="+vectorV1, vectorRequestID), query: queryOf(vectorDataID), now: signedAt,
			wantErr: ErrNoValidSignature, wantMsg: "other signature versions"},
		{name: "no header", header: headers("", vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNotSigned, wantMsg: "missing x-signature"},
		{name: "nil header", header: nil, query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNotSigned},
		{name: "blank header", header: headers("  ", vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNotSigned},
		{name: "ts=abc", header: headers("ts=abc,v1="+vectorV1, vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrInvalidHeader, wantMsg: "ts is not a decimal integer"},
		{name: "signed ts", header: headers("ts=+1704908010,v1="+vectorV1, vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrInvalidHeader},
		{name: "two ts", header: headers("ts=1,ts="+vectorTS+",v1="+vectorV1, vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrInvalidHeader, wantMsg: "more than one ts"},
		{name: "data.id twice", header: headers(vectorHeader, vectorRequestID), query: url.Values{QueryDataID: {vectorDataID, "1"}}, now: signedAt,
			wantErr: ErrInvalidQuery, wantMsg: "more than once"},

		// Absent parts are dropped from the manifest, and only then.
		{name: "missing x-request-id, signed without", header: headers(sign(vectorDataID, "", vectorTS), ""), query: queryOf(vectorDataID), now: signedAt},
		{name: "missing x-request-id, signed with", header: headers(vectorHeader, ""), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "x-request-id sent, signed without", header: headers(sign(vectorDataID, "", vectorTS), vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "missing data.id, signed without", header: headers(sign("", vectorRequestID, vectorTS), vectorRequestID), query: queryOf(""), now: signedAt},
		{name: "nil query, signed without data.id", header: headers(sign("", vectorRequestID, vectorTS), vectorRequestID), query: nil, now: signedAt},
		{name: "empty data.id is absent", header: headers(sign("", vectorRequestID, vectorTS), vectorRequestID), query: url.Values{QueryDataID: {""}}, now: signedAt},
		{name: "missing data.id, signed with", header: headers(vectorHeader, vectorRequestID), query: queryOf(""), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "data.id sent, signed without", header: headers(sign("", vectorRequestID, vectorTS), vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "only ts", header: headers(sign("", "", vectorTS), ""), query: nil, now: signedAt},

		// Re-cased alphanumeric data.id: raw or lower-cased, nothing else.
		{name: "upper-case id signed as sent", header: headers(sign(ord, ordReq, ordTS), ordReq), query: queryOf(ord), now: ordAt},
		{name: "upper-case id signed lower-cased", header: headers(sign(strings.ToLower(ord), ordReq, ordTS), ordReq), query: queryOf(ord), now: ordAt},
		{name: "lower-case id signed lower-cased", header: headers(sign(strings.ToLower(ord), ordReq, ordTS), ordReq), query: queryOf(strings.ToLower(ord)), now: ordAt},
		{name: "lower-case id signed upper-cased", header: headers(sign(ord, ordReq, ordTS), ordReq), query: queryOf(strings.ToLower(ord)), now: ordAt, wantErr: ErrNoValidSignature},
		{name: "mixed-case id signed in another mix", header: headers(sign("Ord01jq4s4ky8hwq6na5pxb65b3d3", ordReq, ordTS), ordReq), query: queryOf(ord), now: ordAt, wantErr: ErrNoValidSignature},

		// Freshness: off by default; MaxAge rejects older, authentic deliveries.
		{name: "seconds ts within max age", maxAge: time.Hour, header: headers(vectorHeader, vectorRequestID), query: queryOf(vectorDataID), now: signedAt.Add(time.Hour)},
		{name: "stale seconds ts", maxAge: time.Hour, header: headers(vectorHeader, vectorRequestID), query: queryOf(vectorDataID), now: signedAt.Add(time.Hour + time.Nanosecond),
			wantErr: ErrTooOld, wantMsg: "older than the 1h0m0s maximum age"},
		{name: "stale by the real clock", maxAge: 24 * time.Hour, header: headers(vectorHeader, vectorRequestID), query: queryOf(vectorDataID), now: time.Now(), wantErr: ErrTooOld},
		{name: "milliseconds ts within max age", maxAge: time.Minute, header: headers(sign(ord, ordReq, ordTS), ordReq), query: queryOf(ord), now: ordAt.Add(time.Minute)},
		// Read as seconds, 1742505638683 would be in the year 57000 and never stale.
		{name: "stale milliseconds ts", maxAge: time.Minute, header: headers(sign(ord, ordReq, ordTS), ordReq), query: queryOf(ord), now: ordAt.Add(time.Minute + time.Millisecond), wantErr: ErrTooOld},
		{name: "future ts is not stale", maxAge: time.Minute, header: headers(vectorHeader, vectorRequestID), query: queryOf(vectorDataID), now: signedAt.Add(-time.Hour)},
		{name: "stale and forged reports forged", maxAge: time.Minute, header: headers("ts=1,v1=00", vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "ts 0 is stale", maxAge: time.Hour, header: headers(sign(vectorDataID, vectorRequestID, "0"), vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrTooOld},
		{name: "huge ts is the future", maxAge: time.Hour, header: headers(sign(vectorDataID, vectorRequestID, "9223372036854775807"), vectorRequestID), query: queryOf(vectorDataID), now: signedAt},
		{name: "ts beyond int64", header: headers(sign(vectorDataID, vectorRequestID, "9223372036854775808"), vectorRequestID), query: queryOf(vectorDataID), now: signedAt, wantErr: ErrInvalidHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secrets := tt.secrets
			if secrets == nil {
				secrets = []string{vectorSecret}
			}
			b := tt.body
			if b == nil {
				b = body
			}
			p := newProvider(t, Config{Secrets: secrets, MaxAge: tt.maxAge})
			err := p.Verify(t.Context(), tt.header, tt.query, b, tt.now)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Verify() = %v, want ok", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Verify() = %v, want %v", err, tt.wantErr)
			}
			if domain.KindOf(err) != domain.KindInvalid {
				t.Errorf("kind = %v, want invalid", domain.KindOf(err))
			}
			if !strings.Contains(domain.MessageOf(err), tt.wantMsg) {
				t.Errorf("message %q does not mention %q", domain.MessageOf(err), tt.wantMsg)
			}
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q leaks a secret", err)
				}
			}
		})
	}
}

// TestSignVector checks Sign and the manifest against the spec's MP-B
// vector, computed by two independent implementations.
func TestSignVector(t *testing.T) {
	if got := manifest(vectorDataID, vectorRequestID, vectorTS); got != "id:999999999;request-id:bb56a2f1-6aae-46ac-982e-9dcd3581d08e;ts:1704908010;" {
		t.Errorf("manifest = %q", got)
	}
	if got := Sign(vectorSecret, vectorDataID, vectorRequestID, vectorTS); got != vectorHeader {
		t.Errorf("Sign = %q, want %q", got, vectorHeader)
	}
}
