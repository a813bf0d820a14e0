package asaas

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func TestVerify(t *testing.T) {
	body := []byte(`{"id":"evt_1&1","event":"PAYMENT_RECEIVED"}`)
	single := newProvider(t, Config{Tokens: []string{testToken}})
	several := newProvider(t, Config{Tokens: []string{"tok_old_0123456789", testToken, "x"}})
	sameLength := strings.Repeat("A", len(testToken))
	tests := []struct {
		name    string
		p       *Provider
		header  http.Header
		wantErr error // nil: accepted
	}{
		{name: "right token", p: single, header: tokenHeader(testToken)},
		{name: "second of several", p: several, header: tokenHeader(testToken)},
		{name: "short token of several", p: several, header: tokenHeader("x")},
		{name: "wrong, same length", p: single, header: tokenHeader(sameLength), wantErr: ErrWrongToken},
		{name: "wrong, last byte", p: single, header: tokenHeader(testToken[:len(testToken)-1] + "5"), wantErr: ErrWrongToken},
		{name: "prefix", p: single, header: tokenHeader(testToken[:10]), wantErr: ErrWrongToken},
		{name: "longer", p: single, header: tokenHeader(testToken + "0"), wantErr: ErrWrongToken},
		{name: "re-cased", p: single, header: tokenHeader(strings.ToUpper(testToken)), wantErr: ErrWrongToken},
		{name: "leading space", p: single, header: tokenHeader(" " + testToken), wantErr: ErrWrongToken},
		{name: "trailing tab", p: single, header: tokenHeader(testToken + "\t"), wantErr: ErrWrongToken},
		{name: "other config's token", p: single, header: tokenHeader("tok_old_0123456789"), wantErr: ErrWrongToken},
		{name: "missing", p: single, header: http.Header{}, wantErr: ErrNoToken},
		{name: "empty", p: single, header: tokenHeader(""), wantErr: ErrNoToken},
		{name: "nil header", p: single, header: nil, wantErr: ErrNoToken},
		{name: "wrong header name", p: single, header: http.Header{"Access_token": {testToken}}, wantErr: ErrNoToken},
		{name: "repeated: first counts", p: single, header: http.Header{"Asaas-Access-Token": {"nope", testToken}}, wantErr: ErrWrongToken},
		{name: "repeated: right first", p: single, header: http.Header{"Asaas-Access-Token": {testToken, "nope"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Verify(t.Context(), tt.header, nil, body, time.Time{})
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Verify() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || domain.KindOf(err) != domain.KindUnauthorized {
				t.Fatalf("Verify() = %v, want KindUnauthorized wrapping %v", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testToken[:8]) {
				t.Errorf("Verify() error %q leaks the token", err)
			}
		})
	}
}
