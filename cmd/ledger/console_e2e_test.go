package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/proto"
	"github.com/ysmood/gson"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/internal/openapitest"
)

// screenshotDir is where the browser tests leave a picture of every page
// (ignored by git) for a reviewer to look at.
const screenshotDir = "../../screenshots"

// browser is a headless Chromium driven through rod, failing the test on
// any script error, console error or failed request of the page, except
// the answers the test provokes on purpose (expect).
type browser struct {
	t      *testing.T
	page   *rod.Page
	html   string // where shoot keeps each page's HTML for validateHTML
	mu     sync.Mutex
	errs   []string
	expect map[string]int // console path → status the test provokes
}

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("the console's browser tests need Chromium (Debian's chromium package; .ci/run installs it)")
	return ""
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	u, err := launcher.New().Bin(chromiumPath(t)).Headless(true).NoSandbox(true).Leakless(false).Launch()
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	br := rod.New().ControlURL(u).Context(t.Context())
	if err := br.Connect(); err != nil {
		t.Fatalf("connect to chromium: %v", err)
	}
	t.Cleanup(func() { _ = br.Close() })
	page, err := br.Page(proto.TargetCreateTarget{})
	if err != nil {
		t.Fatalf("open a page: %v", err)
	}
	b := &browser{t: t, page: page, expect: map[string]int{}, html: t.TempDir()}
	_ = proto.RuntimeEnable{}.Call(page)
	_ = proto.NetworkEnable{}.Call(page)
	go page.EachEvent(b.exception, b.console, b.failed, b.response)()
	b.step("viewport", func() { page.MustSetViewport(1280, 800, 1, false) })
	return b
}

func (b *browser) note(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errs = append(b.errs, msg)
}

func (b *browser) exception(e *proto.RuntimeExceptionThrown) {
	b.note("script error: " + e.ExceptionDetails.Text + " " + e.ExceptionDetails.Exception.Description)
}

func (b *browser) console(e *proto.RuntimeConsoleAPICalled) {
	if e.Type == proto.RuntimeConsoleAPICalledTypeError || e.Type == proto.RuntimeConsoleAPICalledTypeWarning {
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, a.Value.String())
		}
		b.note(fmt.Sprintf("console %s: %s", e.Type, strings.Join(parts, " ")))
	}
}

func (b *browser) failed(e *proto.NetworkLoadingFailed) {
	if e.ErrorText != "net::ERR_ABORTED" { // a download ends its navigation so
		b.note("request failed: " + e.ErrorText)
	}
}

func (b *browser) response(e *proto.NetworkResponseReceived) {
	path := e.Response.URL
	if i := strings.Index(path, "/console/"); i >= 0 {
		path = path[i:]
	}
	b.mu.Lock()
	want := b.expect[path]
	b.mu.Unlock()
	if e.Response.Status >= 400 && want != e.Response.Status {
		b.note(fmt.Sprintf("%s answered %d", e.Response.URL, e.Response.Status))
	}
}

// step runs f (rod's Must calls panic on failure), failing the test on its
// panic or on anything the page did wrong meanwhile.
func (b *browser) step(what string, f func()) {
	b.t.Helper()
	func() {
		page := b.page
		b.page = page.Timeout(20 * time.Second)
		defer func() {
			b.page = page
			if r := recover(); r != nil {
				text, _ := page.Timeout(time.Second).Eval(`() => document.body ? document.body.innerText : ""`)
				var shown string
				if text != nil {
					shown = text.Value.Str()
				}
				b.t.Fatalf("%s: %v\nthe page says:\n%s", what, r, shown)
			}
		}()
		f()
	}()
	time.Sleep(50 * time.Millisecond) // let the page's events arrive
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errs {
		b.t.Errorf("%s: %s", what, e)
	}
	b.errs = nil
}

// submit clicks sel and waits for the navigation it causes.
func (b *browser) submit(sel string) {
	wait := b.page.MustWaitNavigation()
	b.page.MustElement(sel).MustClick()
	wait()
	b.page.MustWaitLoad()
}

func (b *browser) open(url string) { b.page.MustNavigate(url).MustWaitLoad() }

// signIn fills the sign-in form the page shows with token and submits it.
func (b *browser) signIn(token string) {
	b.page.MustElement("#token").MustInput(token)
	b.submit(`form[action="/console/signin"] button`)
}

func (b *browser) eval(js string) gson.JSON { return b.page.MustEval(js) }

// shoot saves the page at desktop and phone width, and checks it: no
// duplicate IDs, a label for every input, headings in order, a title that
// says where, and no horizontal scrolling at phone width.
func (b *browser) shoot(name string) {
	b.t.Helper()
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	for _, size := range []struct {
		label string
		w, h  int
	}{{"phone", 390, 844}, {"desktop", 1280, 800}} {
		b.step(name+" at "+size.label, func() {
			b.page.MustSetViewport(size.w, size.h, 1, size.label == "phone")
			png := b.page.MustScreenshotFullPage()
			if err := os.WriteFile(filepath.Join(screenshotDir, name+"-"+size.label+".png"), png, 0o644); err != nil {
				b.t.Fatal(err)
			}
			if b.eval(`() => document.documentElement.scrollWidth > window.innerWidth + 1`).Bool() {
				b.t.Errorf("%s scrolls sideways at %s width", name, size.label)
			}
		})
	}
	b.step(name+": checks", func() {
		for _, p := range b.eval(pageChecks).Arr() {
			b.t.Errorf("%s: %s", name, p.String())
		}
		doc := "<!DOCTYPE html>\n" + b.eval(`() => document.documentElement.outerHTML`).Str() + "\n"
		if err := os.WriteFile(filepath.Join(b.html, name+".html"), []byte(doc), 0o644); err != nil {
			b.t.Fatal(err)
		}
	})
}

// validator is html-validate, installed by scripts/html-validate-up.sh
// (make test runs it).
const validator = "../../api/console/testdata/htmlvalidate"

// validateHTML runs html-validate over every page shoot kept.
func (b *browser) validateHTML() {
	b.t.Helper()
	bin := filepath.Join(validator, "node_modules", ".bin", "html-validate")
	if _, err := os.Stat(bin); err != nil {
		b.t.Fatalf("the HTML validator is not installed: run scripts/html-validate-up.sh (make test does): %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(b.html, "*.html"))
	if len(files) == 0 {
		b.t.Fatal("no page kept to validate")
	}
	cmd := exec.CommandContext(b.t.Context(), bin, append([]string{"--config", filepath.Join(validator, ".htmlvalidate.json")}, files...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.t.Errorf("html-validate: %v\n%s", err, out)
	}
}

// pageChecks is run in the page: what an accessibility and HTML check
// finds, as a list of problems.
const pageChecks = `() => {
  const out = [];
  const ids = {};
  document.querySelectorAll('[id]').forEach(e => { if (ids[e.id]) out.push('duplicate id ' + e.id); ids[e.id] = true; });
  document.querySelectorAll('input:not([type=hidden]), select, textarea').forEach(e => {
    if (!e.labels || e.labels.length === 0) out.push('no label for ' + (e.name || e.id || e.outerHTML));
  });
  let last = 0;
  document.querySelectorAll('h1, h2, h3, h4, h5, h6').forEach(h => {
    const n = +h.tagName[1];
    if (n > last + 1) out.push('heading ' + h.tagName + ' after h' + last + ': ' + h.textContent.trim());
    last = n;
  });
  if (document.querySelectorAll('h1').length !== 1) out.push(document.querySelectorAll('h1').length + ' h1 elements');
  // Text contrast (WCAG AA, 4.5:1) of every element holding text, against
  // the first opaque background behind it; disabled controls are exempt.
  const rgb = c => (c.match(/[\d.]+/g) || []).map(Number);
  const lum = c => { const v = rgb(c).slice(0, 3).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const bg = e => { for (; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor, a = rgb(c)[3];
    if (a === undefined || a > 0) return c; } return 'rgb(255, 255, 255)'; };
  document.querySelectorAll('body *').forEach(e => {
    if (e.closest('[disabled], svg') || ![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) return;
    const a = lum(getComputedStyle(e).color), b = lum(bg(e)), r = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (r < 4.5) out.push('contrast ' + r.toFixed(2) + ' of ' + e.tagName + ': ' + e.textContent.trim().slice(0, 40));
  });
  if (!document.title.includes('·')) out.push('title does not say where: ' + document.title);
  if (!document.documentElement.lang) out.push('no lang on html');
  if (document.compatMode !== 'CSS1Compat') out.push('not a standards-mode document');
  return out;
}`

// TestConsoleInBrowser (issue 20): the console of a real `ledger serve` in
// headless Chromium: sign in with a read token and an admin token, search a
// payment, open its timeline (a raw body holding a script shows as text, no
// script runs), switch as-of, see admin buttons disabled for a read token
// and refused when forced, a forged CSRF token refused, a reconcile queued
// by an admin; every page photographed at desktop and phone width.
func TestConsoleInBrowser(t *testing.T) {
	env := baseEnv(newDB(t))
	// Credentials, so an admin's "reconcile now" is taken; the check itself
	// fails later against nothing, which the test does not wait for.
	env["LEDGER_STRIPE_API_KEY"], env["LEDGER_STRIPE_API_BASE"] = "sk_test_console", "http://127.0.0.1:9"
	l := startLedger(t, env)
	const id = "pi_console_1"
	now := time.Now()
	created := piEvent("evt_con_1", "payment_intent.created", id, now.Unix()-3600, 4200)
	created.Object["description"] = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">`
	// Markup as the provider would send it, not as Go escapes it.
	body := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(string(created.body()))
	if code, res := l.webhook(t, []byte(body), secretNew, now); code != http.StatusOK {
		t.Fatalf("delivery: %d %v", code, res)
	}
	l.deliver(t, piEvent("evt_con_2", "payment_intent.succeeded", id, now.Unix()-1800, 4200))
	l.waitPayment(t, id, statusIs("confirmed"))
	base := "http://" + l.addr
	paymentPath := "/console/payments/stripe/" + id
	checkConsoleContract(t, base, paymentPath)

	b := newBrowser(t)
	b.step("sign in (read)", func() {
		b.open(base + "/console/")
		b.signIn(readToken)
		if title := b.page.MustInfo().Title; !strings.HasPrefix(title, "Payments") {
			t.Errorf("after sign-in the title is %q", title)
		}
	})
	b.shoot("payments")
	b.step("filters", func() {
		rows := func(q string) int {
			b.open(base + "/console/payments?" + q)
			return b.eval(`() => document.querySelectorAll('table.list tbody tr').length`).Int()
		}
		today := time.Unix(now.Unix()-3600, 0).UTC().Format(time.DateOnly) // the day the payment was created
		if n := rows("currency=USD&min=42.00&max=42.00&from=" + today + "&to=" + today); n != 1 {
			t.Errorf("42.00 USD created today: %d rows, want 1", n)
		}
		if n := rows("currency=USD&min=42.01"); n != 0 {
			t.Errorf("at least 42.01 USD: %d rows, want 0", n)
		}
		if n := rows("currency=BRL"); n != 0 {
			t.Errorf("BRL: %d rows, want 0", n)
		}
		b.open(base + "/console/payments")
	})
	b.step("search", func() {
		b.eval(`() => { document.querySelector('#f-provider').value = 'stripe' }`)
		b.page.MustElement("#f-id").MustInput(id)
		b.submit(`form.filters button`)
		b.page.MustElement("details summary").MustClick()
		body := b.page.MustElement("pre.body").MustText()
		if b.eval(`() => window.__pwned !== undefined`).Bool() || !strings.Contains(body, "<script>window.__pwned = 1</script>") {
			t.Errorf("the raw body ran, or did not show as text: %q", body)
		}
		facts := b.eval(`() => document.querySelectorAll('ol.timeline > li').length`).Int()
		disabled := b.eval(`() => document.querySelector('form[action$="/reconcile"] button').disabled`).Bool()
		if after := b.eval(`() => document.querySelectorAll('ol.timeline > li')[1].innerText`).Str(); !strings.Contains(after, "confirmed") {
			t.Errorf("the second fact's state after does not read confirmed: %q", after)
		}
		if facts != 2 || !disabled {
			t.Errorf("timeline: %d facts (want 2), reconcile disabled %v (want true for a read token)", facts, disabled)
		}
	})
	b.shoot("payment")
	b.step("as of", func() {
		asOf := time.Unix(now.Unix()-2700, 0).UTC().Format(time.RFC3339)
		// The picker, in the browser's zone, fills the RFC 3339 field in UTC.
		filled := b.eval(fmt.Sprintf(`() => {
			const d = new Date(%q), pad = n => String(n).padStart(2, '0');
			const pick = document.querySelector('#as_of_pick');
			pick.value = d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + 'T' + pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
			pick.dispatchEvent(new Event('change'));
			return document.querySelector('#as_of').value;
		}`, asOf)).Str()
		if filled != asOf {
			t.Errorf("the picker filled as_of with %q, want %q", filled, asOf)
		}
		b.submit(`form.asof button`)
		if facts := b.eval(`() => document.querySelectorAll('ol.timeline > li').length`).Int(); facts != 1 {
			t.Errorf("as of %s: %d facts, want 1", asOf, facts)
		}
	})
	b.step("forced and forged posts", func() {
		b.mu.Lock()
		b.expect[paymentPath+"/reconcile"], b.expect["/console/signout"] = http.StatusForbidden, http.StatusForbidden
		b.mu.Unlock()
		forced := b.eval(fmt.Sprintf(`() => fetch(%q, {method: 'POST', body: new URLSearchParams({csrf: document.querySelector('input[name=csrf]').value})}).then(r => r.status)`,
			paymentPath+"/reconcile")).Int()
		forged := b.eval(`() => fetch('/console/signout', {method: 'POST', body: new URLSearchParams({csrf: 'forged'})}).then(r => r.status)`).Int()
		if forced != http.StatusForbidden || forged != http.StatusForbidden {
			t.Errorf("a read token's POST: %d, a forged CSRF token: %d; want 403 and 403", forced, forged)
		}
	})
	b.step("CSV as the API's", func() {
		b.open(base + "/console/ledger")
		href := b.eval(`() => document.querySelector('a[href^="/console/ledger/balances.csv"]').getAttribute('href')`).Str()
		got := b.eval(fmt.Sprintf(`() => fetch(%q).then(r => r.text())`, href)).Str()
		query := strings.TrimPrefix(href, "/console/ledger/balances.csv")
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/v1/ledger/balances"+query, nil)
		req.Header.Set("Authorization", "Bearer "+readToken)
		req.Header.Set("Accept", "text/csv")
		_, _, want := send(t, req)
		if got != string(want) || !strings.Contains(got, "provider_balance") {
			t.Errorf("the console's balances CSV differs from the API's:\n%s\n--- API:\n%s", got, want)
		}
	})
	b.shoot("ledger")
	for _, page := range []string{"reviews", "dead-letters", "reconciliation", "health"} {
		b.step(page, func() { b.open(base + "/console/" + page) })
		b.shoot(page)
	}
	b.step("sign out, sign in (admin), reconcile", func() {
		b.open(base + paymentPath)
		b.submit(`form[action="/console/signout"] button`)
		b.signIn(adminTok)
		b.open(base + paymentPath)
		b.submit(`form[action$="/reconcile"] button`)
		if flash := b.page.MustElement("p.ok").MustText(); !strings.Contains(flash, "queued") {
			t.Errorf("reconcile by an admin: %q", flash)
		}
	})
	b.step("sign-in page", func() { b.open(base + "/console/signin") })
	b.shoot("signin")
	b.step("portuguese", func() {
		b.submit(`a[hreflang="pt"]`)
		if title := b.page.MustInfo().Title; !strings.HasPrefix(title, "Entrar") {
			t.Errorf("in Portuguese the title is %q", title)
		}
	})
	b.validateHTML()
}

// checkConsoleContract asks the console of l what a browser would and
// checks each answer against the OpenAPI document, and the session
// cookie's attributes.
func checkConsoleContract(t *testing.T, base, paymentPath string) {
	t.Helper()
	v, err := openapitest.New(api.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	noRedirect := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var cookie *http.Cookie
	ask := func(method, path string, form url.Values, want int) *http.Response {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequestWithContext(t.Context(), method, base+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("%s %s: %d, want %d", method, path, res.StatusCode, want)
		}
		if err := v.Check(req, res.StatusCode, res.Header, b); err != nil {
			t.Error(err)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s %s: CSP %q", method, path, csp)
		}
		return res
	}
	ask("GET", "/console/", nil, http.StatusSeeOther)
	ask("GET", "/console/payments", nil, http.StatusSeeOther)
	ask("GET", "/console/signin", nil, http.StatusOK)
	ask("POST", "/console/signin", url.Values{"token": {"not-a-token"}}, http.StatusUnauthorized)
	for _, c := range ask("POST", "/console/signin", url.Values{"token": {readToken}}, http.StatusSeeOther).Cookies() {
		if c.Name == "ledger_console" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Secure || strings.Contains(cookie.Value, readToken) {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, not Secure on loopback, the token sealed", cookie)
	}
	ask("GET", "/console/payments", nil, http.StatusOK)
	ask("GET", paymentPath, nil, http.StatusOK)
	ask("GET", paymentPath+"/evidence.zip", nil, http.StatusOK)
	ask("GET", "/console/payments/stripe/pi_nobody", nil, http.StatusNotFound)
	ask("GET", "/console/static/console.css", nil, http.StatusOK)
	ask("GET", "/console/lang/pt?next=/console/reviews", nil, http.StatusSeeOther)
	ask("POST", "/console/signout", url.Values{"csrf": {"forged"}}, http.StatusForbidden)
	ask("POST", "/console/signout", url.Values{}, http.StatusForbidden) // no CSRF token at all
	ask("POST", paymentPath+"/reconcile", url.Values{"csrf": {"forged"}}, http.StatusForbidden)
}

// The console is served where the api role runs, unless LEDGER_CONSOLE=off;
// without it /console/ is the API's 404 and the API answers as before.
func TestWithConsole(t *testing.T) {
	apiHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "api", http.StatusTeapot) })
	for _, tc := range []struct {
		name    string
		api, on bool
		want    int
	}{{"api role, on", true, true, http.StatusSeeOther}, {"LEDGER_CONSOLE=off", true, false, http.StatusTeapot},
		{"no api role", false, true, http.StatusTeapot}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Console: tc.on}
			cfg.Roles.API = tc.api
			h, err := withConsole(cfg, apiHandler, nil)
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range map[string]int{"/console/": tc.want, "/v1/payments": http.StatusTeapot, "/consoles": http.StatusTeapot} {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != want {
					t.Errorf("%s: %d, want %d", path, rec.Code, want)
				}
			}
		})
	}
	if _, err := configFromEnv(mapEnv(map[string]string{"LEDGER_DATABASE_URL": "postgres://x", "LEDGER_CONSOLE": "maybe"})); err == nil ||
		!strings.Contains(err.Error(), "LEDGER_CONSOLE") {
		t.Errorf("LEDGER_CONSOLE=maybe: %v, want an error naming it", err)
	}
}
