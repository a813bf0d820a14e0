package mercadopago

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func FuzzParseSignatureHeader(f *testing.F) {
	for _, h := range []string{
		"", vectorHeader, "ts=1742505638683,v1=" + vectorV1, " TS = 1 , V1 = ab ", "ts=1,v1=ab,v1=cd,v2=ef", "ts=abc,v1=ab",
		"v1=ab", "ts=1,v1", "ts=1,v1=ab=cd", "ts=1,,v1=ab", "ts=1,ts=2,v1=00", "ts=+1,v1=00", "ts=9223372036854775808,v1=00",
		"ts=1,v1=zz", "ts=1,v10=00", "=,=,ts=0,v1=",
	} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		sh, err := ParseSignatureHeader(h)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid ||
				!(errors.Is(err, ErrNotSigned) || errors.Is(err, ErrInvalidHeader) || errors.Is(err, ErrNoValidSignature)) {
				t.Fatalf("ParseSignatureHeader(%q) = %v: not an invalid signature-header error", h, err)
			}
			return
		}
		if sh.TS == "" || !allDigits(sh.TS) || len(sh.Signatures) == 0 || sh.Timestamp < 0 {
			t.Fatalf("ParseSignatureHeader(%q) accepted %+v", h, sh)
		}
		// The canonical form of what was parsed parses to the same values.
		canon := "ts=" + sh.TS
		for _, s := range sh.Signatures {
			canon += ",v1=" + hex.EncodeToString(s)
		}
		again, err := ParseSignatureHeader(canon)
		if err != nil || again.TS != sh.TS || again.Timestamp != sh.Timestamp || len(again.Signatures) != len(sh.Signatures) {
			t.Fatalf("canonical form %q of %q = %+v, %v", canon, h, again, err)
		}
		for i := range sh.Signatures {
			if string(again.Signatures[i]) != string(sh.Signatures[i]) {
				t.Fatalf("canonical form %q of %q changed signature %d", canon, h, i)
			}
		}
	})
}

func FuzzVerify(f *testing.F) {
	f.Add(vectorDataID, vectorRequestID, vectorTS, vectorHeader, vectorSecret, int64(0))
	f.Add("ORD01JQ4S4KY8HWQ6NA5PXB65B3D3", "2066ca19-c6f1-498a-be75-1923005edd06", "1742505638683", "ts=1742505638683,v1=00", "s", int64(3_600_000))
	f.Add("", "", "0", "v1=00,ts=1", "k", int64(-1))
	f.Add("ÄÖ", " r ", "00017", "ts=17,v1="+vectorV1, "secret", int64(1<<40))
	f.Fuzz(func(t *testing.T, dataID, requestID, ts, header, secret string, skewMs int64) {
		if secret == "" || strings.TrimSpace(secret) != secret {
			return // New rejects these; TestNew covers it
		}
		p := newProvider(t, Config{Secrets: []string{secret}})
		strict := newProvider(t, Config{Secrets: []string{secret}, MaxAge: time.Hour})
		query := url.Values{QueryDataID: {dataID}}
		hdr := headers(header, requestID)

		// Whatever Mercado Pago signs, raw or lower-cased, verifies at
		// signing time. The verifier trims data.id and x-request-id and
		// treats blank as absent, so only such values round-trip as signed.
		sh, perr := ParseSignatureHeader("ts=" + ts + ",v1=00")
		if perr == nil && sh.TS == ts && strings.TrimSpace(dataID) == dataID && strings.TrimSpace(requestID) == requestID {
			at := sh.Time()
			for _, signedID := range []string{dataID, strings.ToLower(dataID)} {
				good := headers(Sign(secret, signedID, requestID, ts), requestID)
				if err := p.Verify(t.Context(), good, query, nil, at.Add(time.Duration(skewMs)*time.Millisecond)); err != nil {
					t.Fatalf("Verify(Sign(%q, %q, %q)): %v", signedID, requestID, ts, err)
				}
				if err := strict.Verify(t.Context(), good, query, nil, at); err != nil {
					t.Fatalf("Verify(Sign(%q, %q, %q)) at signing time with MaxAge: %v", signedID, requestID, ts, err)
				}
			}
		}

		// MaxAge only ever adds rejections, and every failure is a
		// KindInvalid error with a known cause.
		now := time.Unix(1704908010, 0).Add(time.Duration(skewMs) * time.Millisecond)
		lenientErr := p.Verify(t.Context(), hdr, query, nil, now)
		strictErr := strict.Verify(t.Context(), hdr, query, nil, now)
		if lenientErr != nil && strictErr == nil {
			t.Fatalf("header %q: accepted with MaxAge, rejected without: %v", header, lenientErr)
		}
		for _, err := range []error{lenientErr, strictErr} {
			if err == nil {
				continue
			}
			if domain.KindOf(err) != domain.KindInvalid || !(errors.Is(err, ErrNotSigned) || errors.Is(err, ErrInvalidHeader) ||
				errors.Is(err, ErrInvalidQuery) || errors.Is(err, ErrNoValidSignature) || errors.Is(err, ErrTooOld)) {
				t.Fatalf("header %q: %v is not a KindInvalid verification error", header, err)
			}
		}

		// Errors do not depend on the secret's value: no secret leaks.
		if lenientErr != nil {
			other := newProvider(t, Config{Secrets: []string{secret + "-other"}})
			if err := other.Verify(t.Context(), hdr, query, nil, now); err == nil || err.Error() != lenientErr.Error() {
				t.Fatalf("header %q: error with another secret %v, with the secret %v", header, err, lenientErr)
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add(vectorBody(f), vectorDataID)
	f.Add([]byte(`{"id":"a47fc06844bf4e418a03aeab1479c496","type":"payment","date_created":"2026-03-01T10:00:00Z","data":{"id":123}}`), "123")
	f.Add([]byte(`{"id":9007199254740993,"action":"payment.updated","date_created":"2026-03-01T10:00:00.000-0300"}`), "9")
	f.Add([]byte(`{"id":"8","type":"topic_merchant_order_wh","data":{"id":"555"}}`), "")
	f.Add([]byte(`{"id":1e3,"type":"payment","data":{"id":"1"}} {}`), "1")
	f.Add([]byte(`{"resource":"123","topic":"payment"}`), "123")
	f.Add([]byte(`{"id":1,"type":"payment","date_created":"9999-12-31T23:00:00-05:00","data":{"id":"1"}}`), "1")
	p := newProvider(f, Config{Secrets: []string{vectorSecret}})
	f.Fuzz(func(t *testing.T, body []byte, dataID string) {
		n, err := p.Parse(t.Context(), headers(vectorHeader, vectorRequestID), url.Values{QueryDataID: {dataID}}, body)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
				t.Fatalf("Parse error %v is not KindInvalid with a message", err)
			}
			return
		}
		if n.Provider != "mercadopago" || checkID("id", n.ProviderEventID) != nil || checkID("type", n.ProviderEventType) != nil ||
			n.SignatureHeader != vectorHeader {
			t.Fatalf("notification identity %+v", n)
		}
		if (len(n.Events) == 0) == (n.IgnoredReason == "") || len(n.Events) > 1 {
			t.Fatalf("%d events with ignored reason %q", len(n.Events), n.IgnoredReason)
		}
		for _, ev := range n.Events {
			pn, ok := ev.(*domain.PaymentNotified)
			if !ok {
				t.Fatalf("event %T", ev)
			}
			m := pn.Meta
			if m.Provider != "mercadopago" || m.ProviderEventID != n.ProviderEventID || m.ProviderEventType != n.ProviderEventType {
				t.Fatalf("meta %+v does not match notification %+v", m, n)
			}
			// The payment is always the signed one.
			if m.ProviderPaymentID != strings.TrimSpace(dataID) || checkID("data.id", m.ProviderPaymentID) != nil {
				t.Fatalf("payment %q from query data.id %q", m.ProviderPaymentID, dataID)
			}
			if m.OccurredAt.Location() != time.UTC || m.OccurredAt.Before(epoch) || m.OccurredAt.After(maxTime) {
				t.Fatalf("OccurredAt %v", m.OccurredAt)
			}
			if _, err := json.Marshal(ev); err != nil {
				t.Fatalf("event does not marshal: %v", err)
			}
		}
	})
}

func FuzzObserve(f *testing.F) {
	const id = "1319876543210"
	const upd = "2026-03-01T11:00:00.000-03:00"
	b, err := os.ReadFile(filepath.Join("testdata", "api", "payment_approved.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, s := range []string{
		answer(id, "approved", "partially_refunded", "150.10", "50.05", "BRL", upd),
		answer(id, "approved", "accredited", "1500", "0", "CLP", upd),
		answer(id, "charged_back", "settled", `"92233720368547758.07"`, "null", "brl", ""),
		answer(id, "weird", "", "10.505", "0", "BRL", upd),
		answer(`"`+id+`"`, "refunded", "refunded", "1e2", "-1", "XX", "2026-03-01"),
		`{"id":1,"status":"pending"}`, `[]`, `{"transaction_amount":0.1}`,
		withFees("approved", "12.34", "BRL", `[{"type":"mercadopago_fee","amount":0.62,"fee_payer":"collector"}]`),
		withFees("approved", "100", "BRL", `[{"amount":7.5,"fee_payer":"payer"},{"amount":92233720368547758.07,"fee_payer":"collector"},{"amount":0.01,"fee_payer":"collector"}]`),
		withFees("pending", "100", "BRL", `[]`),
		withFees("approved", "100", "JPY", `[{"amount":0.5,"fee_payer":"collector"}]`),
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := observe(body, id, now)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
				t.Fatalf("observe error %v is not KindInvalid with a message", err)
			}
			return
		}
		m := o.Meta
		if m.Provider != "mercadopago" || m.ProviderPaymentID != id || m.ProviderEventType != "api.payment" ||
			!strings.HasPrefix(m.ProviderEventID, "obs_") || m.OccurredAt.Location() != time.UTC {
			t.Fatalf("meta %+v", m)
		}
		if !o.Status.Valid() && string(o.Status) != "mp:"+o.ProviderStatus {
			t.Fatalf("status %q for provider status %q", o.Status, o.ProviderStatus)
		}
		if o.Amount < 0 || o.AmountRefunded < 0 || (o.AmountCaptured != 0 && o.AmountCaptured != o.Amount) {
			t.Fatalf("amounts %+v", o)
		}
		if c, err := domain.NewCurrency(string(o.Currency)); err != nil || c != o.Currency {
			t.Fatalf("currency %q not normalised", o.Currency)
		}
		if _, err := json.Marshal(o); err != nil {
			t.Fatalf("does not marshal: %v", err)
		}
		// Deterministic: the same answer is the same fact.
		again, err := observe(body, id, now.Add(time.Hour))
		if err != nil || again.ProviderEventID != o.ProviderEventID {
			t.Fatalf("second observation %+v, %v", again, err)
		}
		checkFacts(t, body, id, now, o)
	})
}

// checkFacts: observeFacts states the observation o first, then at most a
// fee in o's currency, never negative, whose ID does not depend on the clock.
func checkFacts(t *testing.T, body []byte, id string, now time.Time, o *domain.PaymentStatusObserved) {
	t.Helper()
	facts, err := observeFacts(body, id, now)
	if err != nil {
		if domain.KindOf(err) != domain.KindInvalid {
			t.Fatalf("observeFacts error %v is not KindInvalid", err)
		}
		return
	}
	if len(facts) == 0 || len(facts) > 2 || facts[0].EventMeta().ProviderEventID != o.ProviderEventID {
		t.Fatalf("facts %+v for observation %+v", facts, o)
	}
	if len(facts) == 1 {
		return
	}
	fee, ok := facts[1].(*domain.FeeAssessed)
	if !ok || fee.Amount < 0 || fee.Currency != o.Currency || fee.Source != "fee_details" || fee.ProviderPaymentID != id ||
		fee.Key() == o.Key() || !strings.HasPrefix(fee.ProviderEventID, "obs_") {
		t.Fatalf("fee %+v for observation %+v", facts[1], o)
	}
	again, err := observeFacts(body, id, now.Add(time.Hour))
	if err != nil || len(again) != 2 || again[1].EventMeta().ProviderEventID != fee.ProviderEventID {
		t.Fatalf("second facts %+v, %v", again, err)
	}
}
