package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"env", []string{"env", "--api-addr", "127.0.0.1:9999", "--stripe-secret", "whsec_x"}, 0,
			"export LEDGER_PAGARME_JWKS_URL='http://127.0.0.1:9999/.well-known/jwks.json'\n", ""},
		{"env quotes", []string{"env", "--asaas-token", "it's"}, 0, `export LEDGER_ASAAS_WEBHOOK_TOKENS='it'\''s'`, ""},
		{"unknown provider", []string{"--providers", "paypal"}, 2, "", `unknown provider "paypal"`},
		{"bad shares, all reported", []string{"--dup", "2", "--reorder", "-1", "--payments", "0"}, 2, "", "--payments"},
		{"unknown lifecycle", []string{"--skip-lifecycles", "stripe/nope"}, 2, "", `unknown lifecycle "stripe/nope"`},
		{"stray argument", []string{"run", "extra"}, 2, "", "unexpected arguments"},
		{"help", []string{"-h"}, 0, "", "-payments"},
		{"bad lag flags", []string{"--lag-samples", "5", "--lag-reads", "0"}, 2, "", "--lag-reads"},
		{"floor help", []string{"floor", "-h"}, 0, "", "-database"},
		{"floor stray argument", []string{"floor", "extra"}, 2, "", "unexpected arguments"},
		{"floor empty address", []string{"floor", "--listen", ""}, 2, "", "--listen"},
		{"floor unreachable database", []string{"floor", "--database", "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2"}, 1, "", "paysim floor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errOut)
			if code != tt.wantCode || !strings.Contains(out.String(), tt.wantOut) || !strings.Contains(errOut.String(), tt.wantErr) {
				t.Errorf("code %d, stdout %q, stderr %q", code, out.String(), errOut.String())
			}
		})
	}
}
