package pagarme

import (
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func FuzzParseAsymmetricHeader(f *testing.F) {
	for _, h := range []string{
		"", " ", "alg=RS256; kid=k1; signature=AQID", "alg=RS256;kid=k1;signature=AQID;", "signature=AQID; kid=k1; alg=RS256",
		"alg=RS512; kid=k1; signature=AQID", "alg=RS256; kid=k1; kid=k2; signature=AQID", "alg=RS256; kid=k1; AQID",
		"alg=RS256; kid=k1; signature=AQ==", "alg=RS256; kid=k1; signature=+/+/", "ALG=RS256; KID=k1; SIGNATURE=AQID; x=y",
		"alg=RS256, kid=k1, signature=AQID", "alg=RS256; kid=k=1; signature=AQID", "alg=RS256; kid=\x00; signature=AQID",
	} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		ah, err := ParseAsymmetricHeader(h)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" ||
				!(errors.Is(err, ErrNotSigned) || errors.Is(err, ErrInvalidHeader) || errors.Is(err, ErrUnsupportedAlgorithm)) {
				t.Fatalf("ParseAsymmetricHeader(%q) = %v: not an invalid signature-header error", h, err)
			}
			return
		}
		if ah.Algorithm != "RS256" || ah.KeyID == "" || len(ah.KeyID) > maxKeyIDLen || !printable(ah.KeyID) || len(ah.Signature) == 0 {
			t.Fatalf("ParseAsymmetricHeader(%q) accepted %+v", h, ah)
		}
		if strings.ContainsAny(ah.KeyID, ";") {
			t.Fatalf("kid %q contains the separator", ah.KeyID)
		}
		// The canonical form of what was parsed parses to the same values.
		canon := "alg=RS256; kid=" + ah.KeyID + "; signature=" + base64.RawURLEncoding.EncodeToString(ah.Signature)
		again, err := ParseAsymmetricHeader(canon)
		if err != nil || again.KeyID != ah.KeyID || string(again.Signature) != string(ah.Signature) {
			t.Fatalf("canonical form %q of %q = %+v, %v", canon, h, again, err)
		}
	})
}

func FuzzParseHubHeader(f *testing.F) {
	for _, h := range []string{
		"", vectorHub, strings.ToUpper(vectorHub), " sha1 = 9f7e12a429ccb430630b0f9610d12ac25399ebd2 ", "sha256=00",
		"sha1=", "sha1", "=00", "sha1=9f7e12a429ccb430630b0f9610d12ac25399ebd", "sha1=sha1=00",
	} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		mac, err := ParseHubHeader(h)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" ||
				!(errors.Is(err, ErrNotSigned) || errors.Is(err, ErrInvalidHeader) || errors.Is(err, ErrUnsupportedAlgorithm)) {
				t.Fatalf("ParseHubHeader(%q) = %v: not an invalid signature-header error", h, err)
			}
			return
		}
		if len(mac) != 20 {
			t.Fatalf("ParseHubHeader(%q) = %d bytes", h, len(mac))
		}
		again, err := ParseHubHeader("sha1=" + hex.EncodeToString(mac))
		if err != nil || !hmac.Equal(again, mac) {
			t.Fatalf("canonical form of %q = %x, %v", h, again, err)
		}
	})
}

// FuzzVerify checks both schemes on arbitrary bodies and headers: what we
// sign verifies, one flipped bit does not, and any header the fuzzer makes
// up is accepted only when an independent check of the deciding header
// accepts it too.
func FuzzVerify(f *testing.F) {
	body, err := os.ReadFile("testdata/vectors/pagarme_v5_payload.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body, "", vectorHub, vectorSecret, uint16(0))
	f.Add(body, "alg=RS256; kid=k1; signature=AAAA", vectorHub, vectorSecret, uint16(7))
	f.Add([]byte{}, "alg=RS256; kid=unknown; signature=AAAA", "", "s", uint16(1))
	f.Add([]byte("{}"), " ", "sha1=00", "k", uint16(9))
	key := testKeys()[0]
	srv := newJWKSServer(f, map[string]*rsa.PublicKey{"k1": &key.PublicKey})
	f.Fuzz(func(t *testing.T, body []byte, asym, hub, secret string, flip uint16) {
		if secret == "" || strings.TrimSpace(secret) != secret {
			return // New rejects these; TestNew covers it
		}
		p := newProvider(t, Config{JWKSURL: srv.URL, Secrets: []string{secret}})
		signedHub := headers(HeaderHub, SignHub(body, secret))
		signedRS := headers(HeaderAsymmetric, signRS256(t, body, key, "k1"))
		for _, h := range []http.Header{signedHub, signedRS} {
			if err := p.Verify(t.Context(), h, nil, body, t0); err != nil {
				t.Fatalf("Verify(signed %v) = %v", h, err)
			}
			if len(body) > 0 {
				forged := append([]byte{}, body...)
				forged[int(flip)%len(forged)] ^= 1 << (flip % 8)
				if err := p.Verify(t.Context(), h, nil, forged, t0); !errors.Is(err, ErrNoValidSignature) {
					t.Fatalf("Verify(forged) = %v", err)
				}
			}
		}

		h := headers(HeaderAsymmetric, asym, HeaderHub, hub)
		err := p.Verify(t.Context(), h, nil, body, t0)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
				t.Fatalf("Verify(%q, %q) = %v: not KindInvalid", asym, hub, err)
			}
			// The same history with another secret gives the same error:
			// no secret leaks into it.
			other := newProvider(t, Config{JWKSURL: srv.URL, Secrets: []string{secret + "-other"}})
			if err := other.Verify(t.Context(), signedRS, nil, body, t0); err != nil {
				t.Fatal(err)
			}
			if err2 := other.Verify(t.Context(), h, nil, body, t0); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("Verify(%q, %q): error with another secret %v, with the secret %v", asym, hub, err2, err)
			}
			return
		}
		if asym != "" {
			ah, perr := ParseAsymmetricHeader(asym)
			digest := sha256.Sum256(body)
			if perr != nil || ah.KeyID != "k1" || rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, digest[:], ah.Signature) != nil {
				t.Fatalf("Verify accepted asymmetric header %q", asym)
			}
			return
		}
		mac, perr := ParseHubHeader(hub)
		if perr != nil || !hmac.Equal(mac, hubMAC([]byte(secret), body)) {
			t.Fatalf("Verify accepted hub header %q", hub)
		}
	})
}

func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/events/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range append(files, "testdata/vectors/pagarme_v5_payload.json") {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"id":"hook_1","type":"order.paid","created_at":"2026-01-15T12:00:00","data":{"id":"or_1","charges":[{"id":"ch_1","amount":1},{"id":"ch_2","amount":2,"status":"canceled","paid_amount":2}]}}`))
	f.Add([]byte(`{"id":"hook_1","type":"charge.refunded","created_at":"9999-12-31T23:59:59Z","data":{"id":"ch_1","amount":0,"canceled_amount":0}}`))
	p := newProvider(f, Config{Secrets: []string{vectorSecret}})
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := p.Parse(t.Context(), headers(HeaderHub, vectorHub), nil, body)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
				t.Fatalf("Parse error %v is not KindInvalid with a message", err)
			}
			return
		}
		if n.Provider != "pagarme" || n.ProviderEventID == "" || n.ProviderEventType == "" || n.SignatureHeader != vectorHub {
			t.Fatalf("notification identity %+v", n)
		}
		if (len(n.Events) == 0) == (n.IgnoredReason == "") {
			t.Fatalf("%d events with ignored reason %q", len(n.Events), n.IgnoredReason)
		}
		keys := map[string]bool{}
		for _, ev := range n.Events {
			checkEvent(t, n, ev)
			m := ev.EventMeta()
			if keys[m.Key()] {
				t.Fatalf("two events with key %q", m.Key())
			}
			keys[m.Key()] = true
			order := strings.HasPrefix(n.ProviderEventType, "order.")
			if (order && m.SubKey != m.ProviderPaymentID) || (!order && (m.SubKey != "" || len(n.Events) != 1)) {
				t.Fatalf("%s: event %+v", n.ProviderEventType, m)
			}
		}
	})
}

// checkEvent asserts what every mapped event must satisfy to be stored.
func checkEvent(t *testing.T, n domain.Notification, ev domain.Event) {
	t.Helper()
	e, ok := ev.(*domain.PaymentStatusObserved)
	if !ok {
		t.Fatalf("unexpected event type %T", ev)
	}
	m := e.Meta
	if m.Provider != "pagarme" || m.ProviderEventID != n.ProviderEventID || m.ProviderEventType != n.ProviderEventType {
		t.Fatalf("meta %+v does not match notification %+v", m, n)
	}
	if err := checkID("payment id", m.ProviderPaymentID); err != nil {
		t.Fatalf("payment id %q: %v", m.ProviderPaymentID, err)
	}
	if m.OccurredAt.Year() < 1970 || m.OccurredAt.Year() > 9999 || m.OccurredAt.Location() != time.UTC {
		t.Fatalf("OccurredAt %v", m.OccurredAt)
	}
	if e.Status != "" && !e.Status.Valid() {
		t.Fatalf("status %q", e.Status)
	}
	if e.Amount < 0 || e.AmountCaptured < 0 || e.AmountRefunded < 0 {
		t.Fatalf("negative amount in %+v", e)
	}
	if c, err := domain.NewCurrency(string(e.Currency)); err != nil || c != e.Currency {
		t.Fatalf("currency %q not normalised", e.Currency)
	}
	if _, err := json.Marshal(ev); err != nil {
		t.Fatalf("event does not marshal: %v", err)
	}
}
