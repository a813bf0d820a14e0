package stripe

import (
	"net/http"
	"os"
	"path/filepath"
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

func TestContract(t *testing.T) {
	providertest.Run(t, newProvider(t, Config{Secrets: []string{vectorSecret}}), contractVectors(t))
}

func contractVectors(t *testing.T) providertest.Vectors {
	s1 := vectorBody(t)
	at := time.Unix(vectorT, 0)
	good := "t=1700000000,v1=" + vectorS1
	v := providertest.Vectors{
		Accepted: []providertest.Accepted{{
			Delivery: delivery("spec S1", good, s1, at),
			Want: []domain.Event{&domain.PaymentSucceeded{Meta: meta("evt_test_webhook", "payment_intent.succeeded", "pi_test_123", vectorT),
				Amount: 2000, AmountReceived: 2000, Currency: "USD"}},
		}},
		Rejected: []providertest.Rejected{
			rejected(providertest.Forged, "another secret", Sign(s1, "whsec_other", at), s1, at, ErrNoValidSignature),
			rejected(providertest.Forged, "signature of another timestamp", "t=1700000001,v1="+vectorS1, s1, at, ErrNoValidSignature),
			rejected(providertest.Forged, "body with a trailing newline", good, append(append([]byte{}, s1...), '\n'), at, ErrNoValidSignature),
			rejected(providertest.Stale, "one nanosecond past the tolerance", good, s1, at.Add(DefaultTolerance+1), ErrTooOld),
			rejected(providertest.Stale, "by the real clock", good, s1, time.Now(), ErrTooOld),
			rejected(providertest.Truncated, "signature cut to 62 digits", "t=1700000000,v1="+vectorS1[:62], s1, at, ErrNoValidSignature),
			rejected(providertest.Truncated, "no v1", "t=1700000000", s1, at, ErrNoValidSignature),
			rejected(providertest.Truncated, "no t", "v1="+vectorS1, s1, at, ErrInvalidHeader),
			rejected(providertest.Recased, "upper-case keys", "T=1700000000,V1="+vectorS1, s1, at, ErrInvalidHeader),
			rejected(providertest.Recased, "upper-case V1", "t=1700000000,V1="+vectorS1, s1, at, ErrNoValidSignature),
			rejected(providertest.Unsigned, "no header", "", s1, at, ErrNotSigned),
			rejected(providertest.Malformed, "t=abc", "t=abc,v1="+vectorS1, s1, at, ErrInvalidHeader),
		},
		SignedHeaders: []string{Header},
		BodySigned:    true,
		RejectKind:    domain.KindInvalid,
		Secrets:       []string{vectorSecret},
	}
	// The testdata events of untracked types or without a PaymentIntent;
	// every other one is a tracked delivery.
	ignored := map[string]bool{
		"charge.refunded.legacy_charges_api.json":        true,
		"charge.dispute.created.legacy_charges_api.json": true,
		"customer.created.json":                          true,
		"charge.succeeded.json":                          true,
		"charge.updated.metadata.json":                   true,
	}
	files, err := filepath.Glob("testdata/events/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata events: %v, %d files", err, len(files))
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := delivery(filepath.Base(f), Sign(body, vectorSecret, at), body, at)
		if ignored[filepath.Base(f)] {
			v.Ignored = append(v.Ignored, d)
		} else {
			v.Accepted = append(v.Accepted, providertest.Accepted{Delivery: d})
		}
	}
	return v
}

func delivery(name, sig string, body []byte, now time.Time) providertest.Delivery {
	h := http.Header{}
	if sig != "" {
		h.Set(Header, sig)
	}
	return providertest.Delivery{Name: name, Header: h, Body: body, Now: now}
}

func rejected(c providertest.Class, name, sig string, body []byte, now time.Time, cause error) providertest.Rejected {
	return providertest.Rejected{Delivery: delivery(name, sig, body, now), Class: c, Kind: domain.KindInvalid, Err: cause}
}
