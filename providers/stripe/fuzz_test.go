package stripe

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func FuzzParseSignatureHeader(f *testing.F) {
	for _, h := range []string{
		"", "t=1700000000,v1=" + vectorS1, "t=1495999758,v1=ab,v1=cd,v0=ef", "t=abc,v1=ab", "v1=ab",
		"t=1,v1", "t=1,v1=ab=cd", "t=1,,v1=ab", "T=1,V1=AB", "t=+1, v1=ab", "t=-9223372036854775808,v1=",
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
		if len(sh.Signatures) == 0 {
			t.Fatalf("ParseSignatureHeader(%q) accepted a header without v1", h)
		}
		// The canonical form of what was parsed parses to the same values.
		canon := "t=" + strconv.FormatInt(sh.Timestamp, 10)
		for _, s := range sh.Signatures {
			canon += ",v1=" + hex.EncodeToString(s)
		}
		again, err := ParseSignatureHeader(canon)
		if err != nil || again.Timestamp != sh.Timestamp || len(again.Signatures) != len(sh.Signatures) {
			t.Fatalf("canonical form %q of %q = %+v, %v", canon, h, again, err)
		}
	})
}

func FuzzVerify(f *testing.F) {
	s1, err := os.ReadFile("testdata/vectors/s1_payload.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(s1, "t=1700000000,v1="+vectorS1, vectorSecret, int64(vectorT), int64(0))
	f.Add([]byte{}, "t=1700000000,v1="+vectorS3, vectorSecret, int64(vectorT), int64(301))
	f.Add(s1, "t=1700000000,v0="+vectorS1, "whsec_other", int64(-1), int64(-3600))
	f.Add([]byte("x"), "v1=00,t=1,v1=zz", "k", int64(1<<62), int64(1<<40))
	f.Fuzz(func(t *testing.T, body []byte, header, secret string, ts, skew int64) {
		if secret == "" || strings.TrimSpace(secret) != secret {
			return // New rejects these; TestNew covers it
		}
		p := newProvider(t, Config{Secrets: []string{secret}})
		at := time.Unix(ts, 0)

		// Whatever we sign, we verify at signing time.
		if err := p.Verify(t.Context(), headerOf(Sign(body, secret, at)), nil, body, at); err != nil {
			t.Fatalf("Verify(Sign(body)) at t=%d: %v", ts, err)
		}

		// Tolerance only ever adds rejections.
		now := at.Add(time.Duration(skew) * time.Millisecond)
		lenient := newProvider(t, Config{Secrets: []string{secret}, Tolerance: -1})
		strictErr := p.Verify(t.Context(), headerOf(header), nil, body, now)
		lenientErr := lenient.Verify(t.Context(), headerOf(header), nil, body, now)
		if lenientErr != nil && strictErr == nil {
			t.Fatalf("header %q: accepted with tolerance, rejected without: %v", header, lenientErr)
		}
		for _, err := range []error{strictErr, lenientErr} {
			if err != nil && domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("header %q: %v is not KindInvalid", header, err)
			}
		}

		// Errors do not depend on the secret's value: no secret leaks.
		if strictErr != nil {
			other := newProvider(t, Config{Secrets: []string{secret + "-other"}})
			if err := other.Verify(t.Context(), headerOf(header), nil, body, now); err == nil || err.Error() != strictErr.Error() {
				t.Fatalf("header %q: error with another secret %v, with the secret %v", header, err, strictErr)
			}
		}

		// Same verdict as stripe-go ignoring tolerance (but for a missing t).
		checkAgainstSDK(t, body, header, []string{secret})
	})
}

func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/events/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range append(files, "testdata/vectors/s1_payload.json") {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(evt("charge.refunded", `{"id":"ch_1","amount_refunded":1,"currency":"usd","payment_intent":{"id":"pi_1"}}`)))
	f.Add([]byte(`{"id":"evt_1","type":"payment_intent.created","created":253402300799,"data":{"object":{"id":"pi_1","amount":0,"currency":"usd"}}}`))
	f.Add([]byte(evt("charge.updated", `{"id":"ch_1","payment_intent":"pi_1","balance_transaction":null}`)))
	f.Add([]byte(`{"id":"evt_1","type":"charge.updated","created":1,"data":{"object":{"id":"ch_1","payment_intent":"pi_1","balance_transaction":"txn_1"},"previous_attributes":[]}}`))
	p, err := New(Config{Secrets: []string{vectorSecret}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := p.Parse(t.Context(), headerOf("t=1,v1=00"), nil, body)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
				t.Fatalf("Parse error %v is not KindInvalid with a message", err)
			}
			return
		}
		if n.Provider != "stripe" || n.ProviderEventID == "" || n.ProviderEventType == "" || n.SignatureHeader != "t=1,v1=00" {
			t.Fatalf("notification identity %+v", n)
		}
		if (len(n.Events) == 0) == (n.IgnoredReason == "") || len(n.Events) > 1 {
			t.Fatalf("%d events with ignored reason %q", len(n.Events), n.IgnoredReason)
		}
		for _, ev := range n.Events {
			checkEvent(t, n, ev)
		}
	})
}

// checkEvent asserts what every mapped event must satisfy to be stored.
func checkEvent(t *testing.T, n domain.Notification, ev domain.Event) {
	t.Helper()
	m := ev.EventMeta()
	if m.Provider != "stripe" || m.ProviderEventID != n.ProviderEventID || m.ProviderEventType != n.ProviderEventType {
		t.Fatalf("meta %+v does not match notification %+v", m, n)
	}
	if err := checkID("payment id", m.ProviderPaymentID); err != nil {
		t.Fatalf("payment id %q: %v", m.ProviderPaymentID, err)
	}
	if m.OccurredAt.Unix() <= 0 || m.OccurredAt.Location() != time.UTC {
		t.Fatalf("OccurredAt %v", m.OccurredAt)
	}
	if _, err := json.Marshal(ev); err != nil {
		t.Fatalf("event does not marshal: %v", err)
	}
	if n, ok := ev.(*domain.PaymentNotified); ok {
		// charge.updated: no money, only the balance transaction's ID.
		txn, found := strings.CutPrefix(n.Action, "balance_transaction ")
		if !found || m.ProviderEventType != "charge.updated" || checkID("balance transaction", txn) != nil {
			t.Fatalf("notified %+v", n)
		}
		return
	}
	amounts, cur := eventMoney(t, ev)
	for _, a := range amounts {
		if a < 0 {
			t.Fatalf("negative amount in %+v", ev)
		}
	}
	if c, err := domain.NewCurrency(string(cur)); err != nil || c != cur {
		t.Fatalf("currency %q not normalised", cur)
	}
}

// eventMoney returns an event's amounts and currency, and checks the fields
// particular to its type.
func eventMoney(t *testing.T, ev domain.Event) ([]int64, domain.Currency) {
	t.Helper()
	switch e := ev.(type) {
	case *domain.PaymentCreated:
		return []int64{e.Amount}, e.Currency
	case *domain.PaymentProcessing:
		return []int64{e.Amount}, e.Currency
	case *domain.PaymentActionRequired:
		return []int64{e.Amount}, e.Currency
	case *domain.PaymentAuthorized:
		return []int64{e.Amount, e.AmountCapturable}, e.Currency
	case *domain.PaymentSucceeded:
		return []int64{e.Amount, e.AmountReceived}, e.Currency
	case *domain.PaymentFailed:
		return []int64{e.Amount}, e.Currency
	case *domain.PaymentCancelled:
		return []int64{e.Amount}, e.Currency
	case *domain.PaymentRefunded:
		return []int64{e.AmountRefunded, e.AmountCaptured}, e.Currency
	case *domain.DisputeOpened:
		if checkID("dispute id", e.DisputeID) != nil {
			t.Fatalf("dispute id %q", e.DisputeID)
		}
		return []int64{e.Amount}, e.Currency
	case *domain.InquiryOpened:
		if checkID("dispute id", e.DisputeID) != nil {
			t.Fatalf("dispute id %q", e.DisputeID)
		}
		return []int64{e.Amount}, e.Currency
	case *domain.DisputeClosed:
		if e.Outcome != domain.DisputeWon && e.Outcome != domain.DisputeLost {
			t.Fatalf("outcome %q", e.Outcome)
		}
		return []int64{e.Amount}, e.Currency
	}
	t.Fatalf("unexpected event type %T", ev)
	return nil, ""
}
