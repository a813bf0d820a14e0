package main

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-rod/rod/lib/input"
)

// TestConsoleWithPaysim (issue 20): a fresh database filled by paysim, all
// four providers' payments duplicated, reordered and retried; the console
// lists them and opens a payment of each provider (timeline, entries,
// evidence) in headless Chromium without a script error, a failed request
// or invalid HTML.
func TestConsoleWithPaysim(t *testing.T) {
	dir := t.TempDir()
	paysim := filepath.Join(dir, "paysim")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", paysim, "../paysim").CombinedOutput(); err != nil {
		t.Fatalf("build paysim: %v\n%s", err, out)
	}
	apiAddr := freeAddr(t)
	out, err := exec.CommandContext(t.Context(), paysim, "env", "--api-addr", apiAddr).Output()
	if err != nil {
		t.Fatalf("paysim env: %v", err)
	}
	env := baseEnv(newDB(t))
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok {
			env[k] = strings.Trim(v, "'")
		}
	}
	env["LEDGER_API_TOKENS"] = "read:dev-read-token,admin:" + adminTok
	l := startLedger(t, env)
	base := "http://" + l.addr
	sim := exec.CommandContext(t.Context(), paysim, "run", "--ledger", base, "--payments", "80", "--api-addr", apiAddr,
		"--pagarme-key", filepath.Join(dir, "pagarme.pem"), "--lag-samples", "0")
	if out, err := sim.CombinedOutput(); err != nil {
		t.Fatalf("paysim run: %v\n%s", err, out)
	}

	b := newBrowser(t)
	b.step("sign in by keyboard", func() {
		b.open(base + "/console/payments")
		for i := 0; i < 12 && b.eval(`() => document.activeElement.id`).Str() != "token"; i++ {
			b.page.Keyboard.MustType(input.Tab)
		}
		if id := b.eval(`() => document.activeElement.id`).Str(); id != "token" {
			t.Fatalf("Tab does not reach the token field (focus on %q)", id)
		}
		b.page.MustInsertText("dev-read-token")
		wait := b.page.MustWaitNavigation()
		b.page.Keyboard.MustType(input.Enter)
		wait()
		b.page.MustWaitLoad()
		if n := b.eval(`() => document.querySelectorAll('table.list tbody tr').length`).Int(); n != 50 {
			t.Errorf("the first page lists %d payments, want 50", n)
		}
	})
	for _, provider := range []string{"stripe", "mercadopago", "asaas", "pagarme"} {
		b.step(provider, func() {
			b.open(base + "/console/payments?provider=" + provider)
			b.submit(`table.list tbody tr a`)
			if n := b.eval(`() => document.querySelectorAll('ol.timeline > li').length`).Int(); n == 0 {
				t.Errorf("%s: a payment with no fact in its timeline", provider)
			}
		})
		b.shoot("paysim-" + provider)
	}
	b.validateHTML()
}

// freeAddr is a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
