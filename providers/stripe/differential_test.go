package stripe

import (
	"context"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"
	"pgregory.net/rapid"
)

// These tests hold our verification to stripe-go's, the reference
// implementation, on generated bodies, secrets, timestamps and headers.

// sdkSentinel maps stripe-go's errors to ours.
var sdkSentinel = map[error]error{
	webhook.ErrNotSigned:        ErrNotSigned,
	webhook.ErrInvalidHeader:    ErrInvalidHeader,
	webhook.ErrNoValidSignature: ErrNoValidSignature,
	webhook.ErrTooOld:           ErrTooOld,
}

// zeroUnix is what stripe-go signs with when a header has no t: the Unix
// time of Go's zero time.Time.
var zeroUnix = time.Time{}.Unix()

var (
	genSecret = rapid.OneOf(
		rapid.StringMatching(`whsec_[A-Za-z0-9]{8,32}`),
		rapid.StringMatching(`[!-~]{1,40}`),
		rapid.StringN(1, 20, -1).Filter(func(s string) bool { return strings.TrimSpace(s) == s }),
	)
	genBody = rapid.OneOf(rapid.SliceOfN(rapid.Byte(), 0, 300), rapid.Just([]byte(`{"id":"evt_1","type":"x"}`)))
	genTS   = rapid.OneOf(rapid.Int64Range(1_000_000_000, 4_000_000_000), rapid.Int64())
)

// headerItem builds one comma-separated item of a Stripe-Signature header,
// from well-formed to subtly and grossly wrong.
func headerItem(t *rapid.T, ts int64, key string, body []byte) string {
	good := hex.EncodeToString(computeMAC([]byte(key), ts, body))
	s := strconv.FormatInt(ts, 10)
	items := []string{
		"t=" + s, "t=" + s, "t=+" + s, "t=0" + s, "t=" + strconv.FormatInt(ts+1, 10), "T=" + s,
		"t=" + rapid.SampledFrom([]string{"abc", "", " 1", "1 ", "1.5", "0x10", "99999999999999999999"}).Draw(t, "t garbage"),
		"v1=" + good, "v1=" + good, "v1=" + strings.ToUpper(good),
		"v1=" + hex.EncodeToString(computeMAC([]byte(key), zeroUnix, body)),
		"v1=" + hex.EncodeToString(computeMAC([]byte(key), ts+1, body)),
		"v1=" + good[:len(good)-2], "v1=" + good + "0", "v1=" + good + "00",
		"v1=" + hex.EncodeToString(rapid.SliceOfN(rapid.Byte(), 0, 33).Draw(t, "random sig")),
		"v1=zz" + good[2:], "v1=", "V1=" + good, " v1=" + good, "v1=" + good + " ", "v0=" + good, "v2=" + good,
		"x=y", "junk", "a=b=c", "", "=",
	}
	return rapid.SampledFrom(items).Draw(t, "item")
}

type diffCase struct {
	body    []byte
	secrets []string
	header  string
}

func genDiffCase(t *rapid.T) diffCase {
	c := diffCase{
		body:    genBody.Draw(t, "body"),
		secrets: rapid.SliceOfN(genSecret, 1, 3).Draw(t, "secrets"),
	}
	if rapid.IntRange(0, 9).Draw(t, "random header") == 0 {
		c.header = rapid.String().Draw(t, "header")
		return c
	}
	ts := genTS.Draw(t, "ts")
	keys := append([]string{"whsec_not_configured"}, c.secrets...)
	var items []string
	if rapid.Bool().Draw(t, "well formed") {
		// What Stripe sends: t first, then v1 (and v0) signatures.
		items = append(items, "t="+strconv.FormatInt(ts, 10))
		for range rapid.IntRange(1, 3).Draw(t, "signatures") {
			key := rapid.SampledFrom(keys).Draw(t, "key")
			scheme := rapid.SampledFrom([]string{"v1", "v1", "v0"}).Draw(t, "scheme")
			items = append(items, scheme+"="+hex.EncodeToString(computeMAC([]byte(key), ts, c.body)))
		}
	}
	for range rapid.IntRange(0, 6).Draw(t, "items") {
		items = append(items, headerItem(t, ts, rapid.SampledFrom(keys).Draw(t, "key"), c.body))
	}
	order := rapid.Permutation(items).Draw(t, "order")
	c.header = strings.Join(order, ",")
	return c
}

// hasTimestamp reports whether a header has a t item, by the SDK's split.
func hasTimestamp(header string) bool {
	for _, item := range strings.Split(header, ",") {
		if parts := strings.Split(item, "="); len(parts) == 2 && parts[0] == "t" {
			return true
		}
	}
	return false
}

// fataler is what both *testing.T and *rapid.T provide.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// checkAgainstSDK asserts our verdict (tolerance disabled) equals stripe-go's
// ValidatePayloadIgnoringTolerance verdict for any of the secrets, with the
// same cause. The one documented difference: a header without t, which we
// reject as malformed and the SDK rejects as too old once tolerance applies.
func checkAgainstSDK(t fataler, body []byte, header string, secrets []string) {
	t.Helper()
	p, err := New(Config{Secrets: secrets, Tolerance: -1})
	if err != nil {
		t.Fatal(err)
	}
	ours := p.Verify(context.Background(), headerOf(header), nil, body, time.Unix(0, 0))
	var sdk error
	for i, s := range secrets {
		e := webhook.ValidatePayloadIgnoringTolerance(body, header, s)
		if e == nil || i == 0 {
			sdk = e
		}
		if e == nil {
			break
		}
	}
	if header != "" && !hasTimestamp(header) {
		if !errors.Is(ours, ErrInvalidHeader) {
			t.Fatalf("header %q without t: ours = %v, want ErrInvalidHeader", header, ours)
		}
		for _, s := range secrets {
			if webhook.ValidatePayload(body, header, s) == nil {
				t.Fatalf("header %q without t: stripe-go accepts it with tolerance", header)
			}
		}
		return
	}
	if (ours == nil) != (sdk == nil) {
		t.Fatalf("header %q: ours = %v, stripe-go = %v", header, ours, sdk)
	}
	if sdk != nil && !errors.Is(ours, sdkSentinel[sdk]) {
		t.Fatalf("header %q: ours = %v, stripe-go = %v: different cause", header, ours, sdk)
	}
}

func TestVerifyMatchesStripeGo(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		for range rapid.IntRange(1, 20).Draw(t, "cases") {
			c := genDiffCase(t)
			checkAgainstSDK(t, c.body, c.header, c.secrets)
		}
	})
}

// TestVerifyMatchesStripeGoExamples pins hand-picked headers through the
// same differential check, so they run even if the generator changes.
func TestVerifyMatchesStripeGoExamples(t *testing.T) {
	s1 := vectorBody(t)
	good := "v1=" + vectorS1
	zero := "v1=" + hex.EncodeToString(computeMAC([]byte(vectorSecret), zeroUnix, s1))
	for _, h := range []string{
		"", "t=1700000000," + good, "t=1700000000,v0=" + vectorS1, "t=1700000000," + good + ",",
		"t=+1700000000," + good, "t=1700000000, " + good, "T=1700000000," + good, "t=1700000000,V1=" + vectorS1,
		"t=1700000000,v1=" + strings.ToUpper(vectorS1), "t=1700000000,v1=,v1=zz," + good, "t=abc," + good,
		"t=1,t=1700000000," + good, "t=1700000000,t=1," + good, good, zero, "t=1700000000,=", "t=1700000000,v1",
		"t=1700000000,a=b=c," + good,
	} {
		checkAgainstSDK(t, s1, h, []string{vectorSecret})
		checkAgainstSDK(t, s1, h, []string{"whsec_other", vectorSecret})
	}
}

// TestMissingTimestampDivergence documents the one difference from the SDK:
// with tolerance ignored, stripe-go verifies a header without t against the
// zero time; we call such a header malformed.
func TestMissingTimestampDivergence(t *testing.T) {
	body := vectorBody(t)
	h := "v1=" + hex.EncodeToString(computeMAC([]byte(vectorSecret), zeroUnix, body))
	if err := webhook.ValidatePayloadIgnoringTolerance(body, h, vectorSecret); err != nil {
		t.Fatalf("stripe-go ignoring tolerance = %v; the divergence this test documents is gone", err)
	}
	if err := webhook.ValidatePayload(body, h, vectorSecret); !errors.Is(err, webhook.ErrTooOld) {
		t.Fatalf("stripe-go with tolerance = %v, want ErrTooOld", err)
	}
	p := newProvider(t, Config{Secrets: []string{vectorSecret}, Tolerance: -1})
	if err := p.Verify(t.Context(), headerOf(h), nil, body, time.Now()); !errors.Is(err, ErrInvalidHeader) {
		t.Fatalf("Verify = %v, want ErrInvalidHeader", err)
	}
}

// TestStripeGoSignedPayloadsVerify: headers made by stripe-go's test helper
// verify with ours within the tolerance, and Sign produces the same header.
func TestStripeGoSignedPayloadsVerify(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		body := genBody.Draw(t, "body")
		secret := genSecret.Draw(t, "secret")
		at := time.Unix(rapid.Int64Range(1, 4_000_000_000).Draw(t, "ts"), 0)
		sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
		if got := Sign(body, secret, at); got != sp.Header {
			t.Fatalf("Sign = %q, stripe-go = %q", got, sp.Header)
		}
		p, err := New(Config{Secrets: []string{"whsec_other", secret}})
		if err != nil {
			t.Fatal(err)
		}
		h := headerOf(sp.Header)
		for _, now := range []time.Time{at, at.Add(DefaultTolerance), at.Add(-time.Hour)} {
			if err := p.Verify(t.Context(), h, nil, body, now); err != nil {
				t.Fatalf("Verify(%q) at %v = %v", sp.Header, now.Sub(at), err)
			}
		}
		if err := p.Verify(t.Context(), h, nil, body, at.Add(DefaultTolerance+time.Second)); !errors.Is(err, ErrTooOld) {
			t.Fatalf("Verify past tolerance = %v, want ErrTooOld", err)
		}
		v0 := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at, Scheme: "v0"})
		if err := p.Verify(t.Context(), headerOf(v0.Header), nil, body, at); !errors.Is(err, ErrNoValidSignature) {
			t.Fatalf("Verify(v0 only) = %v, want ErrNoValidSignature", err)
		}
	})
}
