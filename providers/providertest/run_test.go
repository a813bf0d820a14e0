package providertest_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
	"github.com/payledger/payledger/providers/providertest"
)

// fake signs the body with HMAC-SHA256 in X-Sig; its flaws are what the
// suite must catch.
type fake struct {
	acceptAll   bool // Verify accepts anything
	unnamed     bool // events do not name the provider
	unstable    bool // event IDs change from call to call
	leak        bool // errors quote the secret
	ignoreTyped bool // tracked deliveries give no events
	authAll     bool // Authenticate says verified to anything
	calls       int
}

const secret = "fake_secret_0123"

var errBadSig = errors.New("bad signature")

func (f *fake) Name() string { return "fake" }

func (f *fake) Verify(_ context.Context, h http.Header, _ url.Values, body []byte, _ time.Time) error {
	if f.acceptAll {
		return nil
	}
	if h.Get("X-Sig") == "" {
		return domain.Invalid("fake: verify", "not signed", errBadSig)
	}
	if !hmac.Equal([]byte(h.Get("X-Sig")), []byte(sign(body))) {
		msg := "no match"
		if f.leak {
			msg += " for " + secret
		}
		return domain.Invalid("fake: verify", msg, errBadSig)
	}
	return nil
}

func (f *fake) VerifyProof(ctx context.Context, h http.Header, q url.Values, body []byte, now time.Time) (domain.AuthProof, error) {
	if err := f.Verify(ctx, h, q, body, now); err != nil {
		return domain.AuthProof{}, err
	}
	return domain.AuthProof{SecretID: domain.SecretFingerprint(secret)}, nil
}

func (f *fake) Authenticate(h http.Header, _ url.Values, body []byte, proof domain.AuthProof) domain.Authenticity {
	matched := -1
	if f.authAll || hmac.Equal([]byte(h.Get("X-Sig")), []byte(sign(body))) {
		matched = 0
	}
	return providers.AuthenticateHMAC(providers.Fingerprints([][]byte{[]byte(secret)}), matched, proof.SecretID)
}

func (f *fake) Parse(_ context.Context, _ http.Header, _ url.Values, body []byte) (domain.Notification, error) {
	f.calls++
	id := "evt_" + string(body)
	if f.unstable {
		id += strings.Repeat("x", f.calls)
	}
	n := domain.Notification{Provider: "fake", ProviderEventID: id}
	if string(body) == "ignored" || f.ignoreTyped {
		n.IgnoredReason = "not tracked"
		return n, nil
	}
	m := domain.Meta{Provider: "fake", ProviderEventID: id, ProviderPaymentID: "pay_1", OccurredAt: time.Unix(1, 0)}
	if f.unnamed {
		m.Provider = ""
	}
	n.Events = []domain.Event{&domain.PaymentNotified{Meta: m}}
	return n, nil
}

func sign(body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

func vectors() providertest.Vectors {
	d := func(name, sig, body string) providertest.Delivery {
		h := http.Header{}
		if sig != "" {
			h.Set("X-Sig", sig)
		}
		return providertest.Delivery{Name: name, Header: h, Body: []byte(body)}
	}
	bad := func(c providertest.Class, name, sig string) providertest.Rejected {
		return providertest.Rejected{Delivery: d(name, sig, "tracked"), Class: c, Kind: domain.KindInvalid, Err: errBadSig}
	}
	good := sign([]byte("tracked"))
	return providertest.Vectors{
		Accepted: []providertest.Accepted{{Delivery: d("tracked", good, "tracked")}},
		Ignored:  []providertest.Delivery{d("ignored", sign([]byte("ignored")), "ignored")},
		Rejected: []providertest.Rejected{
			bad(providertest.Forged, "zeros", strings.Repeat("0", 64)),
			bad(providertest.Truncated, "cut", good[:10]),
			bad(providertest.Recased, "upper", strings.ToUpper(good)),
			bad(providertest.Unsigned, "none", ""),
		},
		Exempt:        map[providertest.Class]string{providertest.Stale: "the fake signs no time"},
		SignedHeaders: []string{"X-Sig"},
		BodySigned:    true,
		RejectKind:    domain.KindInvalid,
		Secrets:       []string{secret},
	}
}

func TestRunPassesAConformingProvider(t *testing.T) {
	providertest.Run(t, &fake{}, vectors())
}

// TestRunCatchesFlaws runs the suite against flawed providers in a child
// process, since a failing Run fails the test that calls it, and checks it
// fails for the right reason.
func TestRunCatchesFlaws(t *testing.T) {
	tests := map[string]string{
		"acceptAll":   "Verify() = nil, want an error of kind invalid",
		"unnamed":     `Provider = "", want "fake"`,
		"unstable":    "Parse() is not stable",
		"leak":        "quotes a secret",
		"ignoreTyped": "Parse() gave no events",
		"noStale":     "no stale delivery and no reason why none can exist",
		"authAll":     "want neither verified nor a quoted secret",
	}
	for flaw, want := range tests {
		t.Run(flaw, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestFlawedChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "PROVIDERTEST_FLAW="+flaw)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), want) {
				t.Errorf("suite on a provider with flaw %s: err %v, output lacks %q:\n%s", flaw, err, want, out)
			}
		})
	}
}

// TestFlawedChild is TestRunCatchesFlaws's child process.
func TestFlawedChild(t *testing.T) {
	flaw := os.Getenv("PROVIDERTEST_FLAW")
	if flaw == "" {
		t.Skip("runs only as the child process of TestRunCatchesFlaws")
	}
	f, v := &fake{}, vectors()
	switch flaw {
	case "acceptAll":
		f.acceptAll = true
	case "unnamed":
		f.unnamed = true
	case "unstable":
		f.unstable = true
	case "leak":
		f.leak = true
	case "ignoreTyped":
		f.ignoreTyped = true
	case "noStale":
		v.Exempt = nil
	case "authAll":
		f.authAll = true
	}
	providertest.Run(t, f, v)
}
