package api

import (
	"context"
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/logtest"
)

func TestAuth(t *testing.T) {
	tests := []struct {
		name       string
		header     string // Authorization; "" = none
		wantStatus int
	}{
		{"no header", "", 401},
		{"wrong scheme", "Basic " + readToken, 401},
		{"scheme only", "Bearer", 401},
		{"empty token", "Bearer ", 401},
		{"wrong token", "Bearer tok_read_7d1f0c9b", 401},
		{"token prefix", "Bearer " + readToken[:len(readToken)-1], 401},
		{"token with suffix", "Bearer " + readToken + "x", 401},
		{"two tokens", "Bearer " + readToken + " " + adminToken, 401},
		{"token without scheme", readToken, 401},
		{"read token", "Bearer " + readToken, 200},
		{"admin token", "Bearer " + adminToken, 200},
		{"scheme is case-insensitive", "bearer " + readToken, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			called := false
			env.deps.Payments = &fakeReader{ListPaymentsFn: func(context.Context, domain.PaymentFilter) (domain.PaymentPage, error) {
				called = true
				return domain.PaymentPage{}, nil
			}}
			req := get("/v1/payments", "")
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			res := serve(t, env.server(t), req)
			if res.status != tc.wantStatus {
				t.Fatalf("status = %d, want %d: %s", res.status, tc.wantStatus, res.raw)
			}
			if tc.wantStatus == 401 {
				if got := res.header.Get("WWW-Authenticate"); got != "Bearer" {
					t.Errorf("WWW-Authenticate = %q, want Bearer", got)
				}
				if res.errorCode() != "unauthorized" || called {
					t.Errorf("code %q, reader called %v", res.errorCode(), called)
				}
			}
		})
	}
}

func TestAuthEveryV1Route(t *testing.T) {
	env := newEnv(t)
	srv := env.server(t)
	for _, path := range []string{"/v1/payments", "/v1/payments/fakepay/pi_1", "/v1/payments/fakepay/pi_1/events"} {
		if res := serve(t, srv, get(path, "")); res.status != 401 {
			t.Errorf("GET %s without token = %d, want 401", path, res.status)
		}
	}
}

func TestAuthNoTokensConfigured(t *testing.T) {
	env := newEnv(t)
	env.cfg.Tokens = nil
	if res := serve(t, env.server(t), get("/v1/payments", readToken)); res.status != 401 {
		t.Errorf("status = %d, want 401 when no token is configured", res.status)
	}
}

func TestMatchTokenRole(t *testing.T) {
	tokens := digestTokens([]Token{{Role: RoleAdmin, Name: "ana", Value: "a1"}, {Role: RoleRead, Name: "bi", Value: "r1"},
		{Role: RoleRead, Value: "r2"}})
	for _, tc := range []struct {
		header   string
		wantRole Role
		wantName string
		wantOK   bool
	}{
		{"Bearer a1", RoleAdmin, "ana", true},
		{"Bearer r1", RoleRead, "bi", true},
		{"Bearer r2", RoleRead, "read", true}, // no name: its role's
		{"Bearer r3", "", "", false},
		{"Bearer  r2 ", RoleRead, "read", true},
	} {
		got, ok := matchToken(tokens, tc.header)
		if got.role != tc.wantRole || got.name != tc.wantName || ok != tc.wantOK {
			t.Errorf("matchToken(%q) = %q %q, %v; want %q %q, %v", tc.header, got.role, got.name, ok, tc.wantRole, tc.wantName, tc.wantOK)
		}
	}
	if _, ok := matchToken(nil, "Bearer x"); ok {
		t.Error("matched with no tokens")
	}
}

func TestParseTokens(t *testing.T) {
	tests := []struct {
		in      string
		want    []Token
		wantErr string
	}{
		{in: "", want: nil},
		{in: "   ", want: nil},
		{in: "read:s3cret-r", want: []Token{{RoleRead, "read", "s3cret-r"}}},
		{in: " read:s3cret-r , admin:s3cret-a ", want: []Token{{RoleRead, "read", "s3cret-r"}, {RoleAdmin, "admin", "s3cret-a"}}},
		{in: "admin:ana:s3cret-a,read:bi:s3cret-r", want: []Token{{RoleAdmin, "ana", "s3cret-a"}, {RoleRead, "bi", "s3cret-r"}}},
		{in: " admin : ana.b_2-x : s3cret-a ", want: []Token{{RoleAdmin, "ana.b_2-x", "s3cret-a"}}},
		{in: "admin:with:two:colons", wantErr: "entry 1: want role:name:token or role:token"},
		{in: "admin:Ana:s3cret-a", wantErr: "entry 1: the name must be"},
		{in: "admin::s3cret-a", wantErr: "entry 1: the name must be"},
		{in: "admin:S3CRET-A:x", wantErr: "entry 1: the name must be"},
		{in: "admin:ana:", wantErr: "entry 1: empty token"},
		{in: "admin:ana:s3cret-a,read:bi:s3cret-a", wantErr: "entry 2: same token as entry 1"},
		{in: "root:ana:s3cret-a", wantErr: "entry 1: role is not read or admin"},
		{in: "writer:s3cret-w", wantErr: "entry 1: role is not read or admin"},
		{in: "READ:s3cret-r", wantErr: "entry 1: role is not read or admin"},
		{in: "s3cret-r:read", wantErr: "entry 1: role is not read or admin"},
		{in: "read:", wantErr: "entry 1: empty token"},
		{in: "read:s3cret-r,admin:s3cret-r", wantErr: "entry 2: same token as entry 1"},
		{in: "s3cret-r", wantErr: "entry 1: want role:name:token or role:token"},
		{in: "read:s3cret-r,", wantErr: "entry 2: want role:name:token or role:token"},
		{in: "read:a,,admin:b", wantErr: "entry 2: want role:name:token or role:token"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTokens(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("error leaks a token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("token %d = %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// The access log says which token asked, by its name, never its value.
func TestAuthLogsTokenName(t *testing.T) {
	env := newEnv(t)
	var rec logtest.Recorder
	env.cfg.Logger = rec.Logger()
	env.cfg.Tokens = []Token{{Role: RoleRead, Name: "bi", Value: readToken}, {Role: RoleAdmin, Value: adminToken}}
	srv := env.server(t)
	serve(t, srv, get("/v1/payments", readToken))
	serve(t, srv, get("/v1/payments", adminToken))
	if rec.Count("http request", "role=read", "token=bi") != 1 || rec.Count("http request", "role=admin", "token=admin") != 1 {
		t.Error("access log lacks the token names")
	}
	if rec.Count(readToken) != 0 || rec.Count(adminToken) != 0 {
		t.Error("access log shows a token value")
	}
}
