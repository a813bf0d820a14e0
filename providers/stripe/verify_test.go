package stripe

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func TestVerify(t *testing.T) {
	s1 := vectorBody(t)
	signedAt := time.Unix(vectorT, 0)
	good := "t=1700000000,v1=" + vectorS1
	oldSig := hex.EncodeToString(computeMAC([]byte("whsec_old"), vectorT, s1))
	newSig := hex.EncodeToString(computeMAC([]byte("whsec_new"), vectorT, s1))
	tests := []struct {
		name      string
		secrets   []string // default: the vector's secret
		tolerance time.Duration
		header    http.Header
		body      []byte
		now       time.Time
		wantErr   error  // nil: accepted
		wantMsg   string // part of the client-safe message
	}{
		{name: "S1 at signing time", header: headerOf(good), body: s1, now: signedAt},
		{name: "S3 empty body", header: headerOf("t=1700000000,v1=" + vectorS3), body: nil, now: signedAt},
		{name: "S3 empty slice body", header: headerOf("t=1700000000,v1=" + vectorS3), body: []byte{}, now: signedAt},
		{name: "S1 exactly at tolerance", header: headerOf(good), body: s1, now: signedAt.Add(DefaultTolerance)},
		{name: "S1 one nanosecond past tolerance", header: headerOf(good), body: s1, now: signedAt.Add(DefaultTolerance + 1),
			wantErr: ErrTooOld, wantMsg: "older than the 5m0s tolerance"},
		{name: "S1 by the real clock is too old", header: headerOf(good), body: s1, now: time.Now(), wantErr: ErrTooOld},
		{name: "S3 by the real clock is too old", header: headerOf("t=1700000000,v1=" + vectorS3), now: time.Now(), wantErr: ErrTooOld},
		{name: "S1 by the real clock, tolerance disabled", tolerance: -1, header: headerOf(good), body: s1, now: time.Now()},
		{name: "future timestamp accepted", header: headerOf(good), body: s1, now: signedAt.Add(-time.Hour)},
		{name: "one of several v1 matches", body: s1, now: signedAt,
			header: headerOf("t=1700000000,v1=" + strings.Repeat("00", 32) + ",v1=" + vectorS1 + ",v0=" + vectorS1)},
		{name: "rotation: second secret matches", secrets: []string{"whsec_new", "whsec_old"}, body: s1, now: signedAt,
			header: headerOf("t=1700000000,v1=" + oldSig)},
		{name: "rotation: Stripe sends both, we know the old", secrets: []string{"whsec_old"}, body: s1, now: signedAt,
			header: headerOf("t=1700000000,v1=" + newSig + ",v1=" + oldSig)},
		{name: "upper-case hex, as the SDK accepts", header: headerOf("t=1700000000,v1=" + strings.ToUpper(vectorS1)), body: s1, now: signedAt},
		{name: "t with leading zeros signs the same", header: headerOf("t=01700000000,v1=" + vectorS1), body: s1, now: signedAt},

		{name: "no header", header: http.Header{}, body: s1, now: signedAt, wantErr: ErrNotSigned, wantMsg: "missing Stripe-Signature header"},
		{name: "nil header", header: nil, body: s1, now: signedAt, wantErr: ErrNotSigned},
		{name: "v0 only", header: headerOf("t=1700000000,v0=" + vectorS1), body: s1, now: signedAt,
			wantErr: ErrNoValidSignature, wantMsg: "no valid v1 signature"},
		{name: "wrong secret", secrets: []string{"whsec_other"}, header: headerOf(good), body: s1, now: signedAt,
			wantErr: ErrNoValidSignature, wantMsg: "matches a configured secret"},
		{name: "signature of another timestamp", header: headerOf("t=1700000001,v1=" + vectorS1), body: s1, now: signedAt, wantErr: ErrNoValidSignature},
		{name: "truncated signature", header: headerOf("t=1700000000,v1=" + vectorS1[:62]), body: s1, now: signedAt, wantErr: ErrNoValidSignature},
		{name: "body with trailing newline", header: headerOf(good), body: append(append([]byte{}, s1...), '\n'), now: signedAt, wantErr: ErrNoValidSignature},
		{name: "stale", header: headerOf(Sign(s1, vectorSecret, signedAt.Add(-301*time.Second))), body: s1, now: signedAt, wantErr: ErrTooOld},
		{name: "stale and forged reports stale, as the SDK", header: headerOf("t=1,v1=00"), body: s1, now: signedAt, wantErr: ErrTooOld},
		{name: "extremely old t", header: headerOf("t=-9223372036854775808,v1=00"), body: s1, now: signedAt, wantErr: ErrTooOld},
		{name: "extremely future t", header: headerOf("t=9223372036854775807,v1=00"), body: s1, now: signedAt, wantErr: ErrNoValidSignature},
		{name: "missing t", header: headerOf("v1=" + vectorS1), body: s1, now: signedAt, wantErr: ErrInvalidHeader, wantMsg: "no t timestamp"},
		{name: "t=abc", header: headerOf("t=abc,v1=" + vectorS1), body: s1, now: signedAt, wantErr: ErrInvalidHeader, wantMsg: "t is not an integer"},
		{name: "item without =", header: headerOf("t=1700000000,v1"), body: s1, now: signedAt, wantErr: ErrInvalidHeader, wantMsg: "item 2 is not key=value"},
		{name: "a=b=c", header: headerOf("t=1700000000,v1=" + vectorS1 + "=x"), body: s1, now: signedAt, wantErr: ErrInvalidHeader},
		{name: "empty value", header: headerOf(""), body: s1, now: signedAt, wantErr: ErrNotSigned},
		{name: "upper-case keys are unknown keys", header: headerOf("T=1700000000,V1=" + vectorS1), body: s1, now: signedAt, wantErr: ErrInvalidHeader},
		{name: "upper-case V1 only", header: headerOf("t=1700000000,V1=" + vectorS1), body: s1, now: signedAt, wantErr: ErrNoValidSignature},
		{name: "space after comma", header: headerOf("t=1700000000, v1=" + vectorS1), body: s1, now: signedAt, wantErr: ErrNoValidSignature},
		{name: "space inside t", header: headerOf("t=1700000000 ,v1=" + vectorS1), body: s1, now: signedAt, wantErr: ErrInvalidHeader},
		{name: "space inside v1", header: headerOf("t=1700000000,v1= " + vectorS1), body: s1, now: signedAt, wantErr: ErrNoValidSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secrets := tt.secrets
			if secrets == nil {
				secrets = []string{vectorSecret}
			}
			p := newProvider(t, Config{Secrets: secrets, Tolerance: tt.tolerance})
			err := p.Verify(t.Context(), tt.header, nil, tt.body, tt.now)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Verify() = %v, want ok", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("Verify() = %v, want invalid %v", err, tt.wantErr)
			}
			msg := domain.MessageOf(err)
			if !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message %q does not say %q", msg, tt.wantMsg)
			}
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q leaks secret %q", err, s)
				}
			}
		})
	}
}

// TestVerifyForgedBody flips each byte of S1 in turn: no single-byte change
// may verify.
func TestVerifyForgedBody(t *testing.T) {
	s1 := vectorBody(t)
	p := newProvider(t, Config{Secrets: []string{vectorSecret}})
	h := headerOf("t=1700000000,v1=" + vectorS1)
	for i := range s1 {
		forged := append([]byte{}, s1...)
		forged[i] ^= 0x01
		if err := p.Verify(t.Context(), h, nil, forged, time.Unix(vectorT, 0)); !errors.Is(err, ErrNoValidSignature) {
			t.Fatalf("byte %d flipped: Verify() = %v, want ErrNoValidSignature", i, err)
		}
	}
}
