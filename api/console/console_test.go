package console

import (
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Every text exists in both languages, and no page names a key the
// catalogue lacks.
func TestCatalogueComplete(t *testing.T) {
	for key, m := range messages {
		if strings.TrimSpace(m[0]) == "" || strings.TrimSpace(m[1]) == "" {
			t.Errorf("%s: missing in a language: %q", key, m)
		}
	}
	keyRE := regexp.MustCompile(`call \$?\.T "([a-z_.]+)"`)
	entries, err := templateFS.ReadDir("templates")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := templateFS.ReadFile("templates/" + e.Name())
		for _, m := range keyRE.FindAllStringSubmatch(string(b), -1) {
			if _, ok := messages[m[1]]; !ok {
				t.Errorf("%s names %q, which the catalogue lacks", e.Name(), m[1])
			}
		}
	}
}

func TestLanguage(t *testing.T) {
	for _, tc := range []struct{ accept, cookie, want string }{
		{"", "", "en"}, {"pt-BR,pt;q=0.9,en;q=0.8", "", "pt"}, {"de-DE, en;q=0.5", "", "en"}, {"fr", "", "en"},
		{"pt-BR", "en", "en"}, {"en", "pt", "pt"}, {"en", "xx", "en"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/console/payments", nil)
		r.Header.Set("Accept-Language", tc.accept)
		if tc.cookie != "" {
			r.AddCookie(&http.Cookie{Name: langCookie, Value: tc.cookie})
		}
		if got := language(r); got != tc.want {
			t.Errorf("Accept-Language %q, cookie %q: %s, want %s", tc.accept, tc.cookie, got, tc.want)
		}
	}
}

// The palette's text colours reach WCAG AA (4.5:1) on both backgrounds.
func TestPaletteContrast(t *testing.T) {
	css, err := os.ReadFile("static/console.css")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`--([a-z]+):\s*(#[0-9a-f]{6})`).FindAllStringSubmatch(string(css), -1) {
		vars[m[1]] = m[2]
	}
	for _, fg := range []string{"fg", "muted", "accent", "ok", "warn", "bad"} {
		for _, bg := range []string{"bg", "panel"} {
			if r := contrast(vars[fg], vars[bg]); r < 4.5 {
				t.Errorf("--%s on --%s: contrast %.2f, want at least 4.5", fg, bg, r)
			}
		}
	}
	if r := contrast("#ffffff", vars["accent"]); r < 4.5 {
		t.Errorf("button text on --accent: contrast %.2f", r)
	}
}

func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func luminance(hex string) float64 {
	if len(hex) != 7 {
		return math.NaN()
	}
	var l float64
	for i, w := range []float64{0.2126, 0.7152, 0.0722} {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		c := float64(v) / 255
		if c <= 0.03928 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		l += w * c
	}
	return l
}

func TestSession(t *testing.T) {
	k, err := newKeys([]Token{{Role: "read", Name: "r", Value: "tok-read"}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	s := session{Token: "tok-read", Role: "read", Name: "r", Nonce: "n1", Expires: now.Add(time.Hour)}
	v, err := k.seal(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(v, "tok-read") {
		t.Errorf("the cookie shows the token")
	}
	if got, err := k.open(v, now); err != nil || got != s {
		t.Errorf("open: %+v, %v", got, err)
	}
	if _, err := k.open(v, now.Add(2*time.Hour)); err == nil {
		t.Errorf("an expired session opened")
	}
	tampered := []byte(v)
	tampered[len(tampered)/2] ^= 1
	if _, err := k.open(string(tampered), now); err == nil {
		t.Errorf("a tampered cookie opened")
	}
	other, _ := newKeys([]Token{{Role: "read", Name: "r", Value: "rotated"}})
	if _, err := other.open(v, now); err == nil {
		t.Errorf("a cookie opened after the tokens changed")
	}
	if !k.checkCSRF(s, k.csrfToken(s)) || k.checkCSRF(s, "forged") || k.checkCSRF(session{Nonce: "n2"}, k.csrfToken(s)) {
		t.Errorf("CSRF: a token of the session must pass, any other fail")
	}
}

func TestMatchAndNext(t *testing.T) {
	tokens := []Token{{Role: "read", Name: "r", Value: "a"}, {Role: "admin", Name: "x", Value: "b"}}
	if tk, ok := match(tokens, "b"); !ok || tk.Role != "admin" {
		t.Errorf("match b: %+v %v", tk, ok)
	}
	if _, ok := match(tokens, ""); ok {
		t.Errorf("an empty token matched")
	}
	for in, want := range map[string]string{"/console/reviews": "/console/reviews", "//evil.example/": "/console/payments",
		"https://evil.example": "/console/payments", "/console/\\evil": "/console/payments", "": "/console/payments"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		amount int64
		cur    string
		want   string
	}{{4200, "USD", "42.00 USD"}, {5, "BRL", "0.05 BRL"}, {-150, "USD", "-1.50 USD"}, {2000, "JPY", "2000 JPY"},
		{1500, "BHD", "1.500 BHD"}, {0, "", "0.00"}} {
		if got := money(tc.amount, tc.cur); got != tc.want {
			t.Errorf("money(%d, %s) = %q, want %q", tc.amount, tc.cur, got, tc.want)
		}
	}
}

// FuzzOpenSession: any cookie value opens to a session only when sealed by
// the key; nothing panics.
func FuzzOpenSession(f *testing.F) {
	k, err := newKeys([]Token{{Role: "admin", Name: "a", Value: "tok"}})
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	good, _ := k.seal(session{Token: "tok", Role: "admin", Nonce: "n", Expires: now.Add(time.Hour)})
	for _, seed := range []string{good, "", "AAAA", good[:len(good)-2], strings.Repeat("A", 200)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := k.open(v, now)
		if err == nil && v != good && s.Token != "tok" {
			t.Errorf("%q opened to %+v", v, s)
		}
	})
}

// The timeline's state after each fact is the replay's changes applied in
// fold order; a repeat changes nothing; bodies and evidence join by ID.
func TestTimeline(t *testing.T) {
	change := func(field, from, to string) struct{ Field, From, To string } {
		return struct{ Field, From, To string }{field, from, to}
	}
	facts := []replayFact{{N: 1, EventID: "a"}, {N: 2, EventID: "b"}, {N: 3, EventID: "c", Repeat: true}}
	for _, ch := range []struct{ Field, From, To string }{change("status", "", "pending"), change("amount", "0", "500"), change("currency", "", "BRL")} {
		facts[0].Changes = append(facts[0].Changes, struct {
			Field string `json:"field"`
			From  string `json:"from"`
			To    string `json:"to"`
		}(ch))
	}
	for _, ch := range []struct{ Field, From, To string }{change("status", "pending", "confirmed"), change("amount_captured", "0", "500")} {
		facts[1].Changes = append(facts[1].Changes, struct {
			Field string `json:"field"`
			From  string `json:"from"`
			To    string `json:"to"`
		}(ch))
	}
	evs := []event{{EventID: "b"}}
	evs[0].Metadata.RawBody = "Ym9keQ=="
	got := timeline(facts, evs, []evidenceFact{{EventID: "a"}})
	want := []stateAfter{{Status: "pending", Currency: "BRL", Amount: 500}, {Status: "confirmed", Currency: "BRL", Amount: 500, Captured: 500},
		{Status: "confirmed", Currency: "BRL", Amount: 500, Captured: 500}}
	for i := range want {
		if got[i].After != want[i] {
			t.Errorf("fact %d: state after %+v, want %+v", i+1, got[i].After, want[i])
		}
	}
	if got[0].Evidence == nil || got[1].Evidence != nil || got[1].RawBody != "Ym9keQ==" || got[0].RawBody != "" {
		t.Errorf("joins: %+v", got)
	}
}
