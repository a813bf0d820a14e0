package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config configures the console.
type Config struct {
	// API is the read API's handler (api.Server): every page is built from
	// its answers, fetched in process with the person's own token.
	API http.Handler
	// Tokens are LEDGER_API_TOKENS: who may sign in, with which role.
	Tokens []Token
	// SessionTTL is how long a sign-in lasts; 0 is 8 hours.
	SessionTTL time.Duration
	// Now is the clock; nil is time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Console serves /console/.
type Console struct {
	cfg   Config
	keys  keys
	pages map[string]*template.Template
	mux   *http.ServeMux
}

// New builds the console.
func New(cfg Config) (*Console, error) {
	if cfg.API == nil {
		return nil, errors.New("console: no API handler")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 8 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	k, err := newKeys(cfg.Tokens)
	if err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c := &Console{cfg: cfg, keys: k, pages: pages, mux: http.NewServeMux()}
	c.routes()
	return c, nil
}

// pageNames are the templates under templates/, each rendered inside
// layout.html.
var pageNames = []string{"signin", "payments", "payment", "reviews", "deadletters", "ledger", "reconciliation", "health", "bulkretry", "deadletter", "error"}

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

func (c *Console) routes() {
	static, _ := fs.Sub(staticFS, "static")
	c.mux.Handle("GET /console/static/", http.StripPrefix("/console/static/", http.FileServerFS(static)))
	c.mux.HandleFunc("GET /console/{$}", c.home)
	c.mux.HandleFunc("GET /console/signin", c.signinForm)
	c.mux.HandleFunc("POST /console/signin", c.signin)
	c.mux.HandleFunc("GET /console/lang/{lang}", c.setLang)
	c.mux.Handle("POST /console/signout", c.form(c.signout, false))
	c.mux.Handle("GET /console/payments", c.page(c.payments))
	c.mux.Handle("GET /console/payments/{provider}/{id}", c.page(c.payment))
	c.mux.Handle("GET /console/payments/{provider}/{id}/evidence.zip", c.page(c.evidenceZip))
	c.mux.Handle("POST /console/payments/{provider}/{id}/reconcile", c.form(c.reconcile, true))
	c.mux.Handle("GET /console/reviews", c.page(c.reviews))
	c.mux.Handle("POST /console/reviews/{rid}/resolve", c.form(c.resolve, true))
	c.mux.Handle("GET /console/dead-letters", c.page(c.deadLetters))
	c.mux.Handle("GET /console/dead-letters/{did}", c.page(c.deadLetter))
	c.mux.Handle("POST /console/dead-letters/{did}/retry", c.form(c.retry, true))
	c.mux.Handle("POST /console/dead-letters/retry", c.form(c.retryAll, true))
	c.mux.Handle("GET /console/ledger", c.page(c.ledger))
	c.mux.Handle("GET /console/ledger/{file}", c.page(c.ledgerCSV))
	c.mux.Handle("GET /console/reconciliation", c.page(c.reconciliation))
	c.mux.Handle("GET /console/health", c.page(c.health))
	c.mux.HandleFunc("/console/", c.notFound)
}

// ServeHTTP serves /console/ with the security headers every answer
// carries: a strict CSP (no inline script or style, nothing from another
// origin), no framing, no sniffing, no referrer, no caching of pages.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}

// view is what every page template gets.
type view struct {
	T       func(key string) string // the message catalogue in the page's language
	Lang    string
	Title   string
	Nav     string // the current section
	Session *session
	CSRF    string
	Admin   bool
	Data    any
	Flash   string
	Path    string
}

// render writes page with data, in the request's language.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, v view) {
	v.Lang = language(r)
	v.T = catalogue(v.Lang)
	v.Path = r.URL.RequestURI()
	if v.Session != nil {
		v.CSRF, v.Admin = c.keys.csrfToken(*v.Session), v.Session.Role == "admin"
	}
	var buf bytes.Buffer
	if err := c.pages[name].Execute(&buf, v); err != nil {
		c.cfg.Logger.Error("console: render", "page", name, "err", err)
		http.Error(w, "console: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// session reads the request's session; nil when signed out.
func (c *Console) session(r *http.Request) *session {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	s, err := c.keys.open(ck.Value, c.cfg.Now())
	if err != nil {
		return nil
	}
	return &s
}

// page guards a page: signed in, or off to the sign-in form.
func (c *Console) page(h func(http.ResponseWriter, *http.Request, *session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := c.session(r)
		if s == nil {
			http.Redirect(w, r, "/console/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		h(w, r, s)
	})
}

// form guards a state-changing form: signed in, the session's CSRF token,
// and for admin forms the admin role (the API checks it again).
func (c *Console) form(h func(http.ResponseWriter, *http.Request, *session), admin bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := c.session(r)
		if s == nil {
			c.fail(w, r, nil, http.StatusForbidden, "error.signed_out")
			return
		}
		if err := r.ParseForm(); err != nil || !c.keys.checkCSRF(*s, r.PostFormValue("csrf")) {
			c.fail(w, r, s, http.StatusForbidden, "error.csrf")
			return
		}
		if admin && s.Role != "admin" {
			c.fail(w, r, s, http.StatusForbidden, "error.admin_only")
			return
		}
		h(w, r, s)
	})
}

// fail renders the error page with a message key.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, status int, key string) {
	c.render(w, r, status, "error", view{Title: "error.title", Session: s, Data: errorData{Status: status, Key: key}})
}

type errorData struct {
	Status int
	Key    string
	Detail string
}

func (c *Console) notFound(w http.ResponseWriter, r *http.Request) {
	c.fail(w, r, c.session(r), http.StatusNotFound, "error.not_found")
}

// answer is one in-process API answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// recorder is the smallest http.ResponseWriter: the console reads the API's
// answers whole (they are pages of a bounded size).
type recorder struct {
	status int
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// call sends one request to the API in process, as the signed-in person.
func (c *Console) call(r *http.Request, s *session, method, path string, body any) (answer, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return answer{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(r.Context(), method, path, rd)
	if err != nil {
		return answer{}, fmt.Errorf("console: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.RemoteAddr = r.RemoteAddr
	rec := &recorder{header: http.Header{}}
	c.cfg.API.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return answer{status: rec.status, header: rec.header, body: rec.body.Bytes()}, nil
}

// apiError is an API answer that was not 2xx, as its error body says.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("API %d %s: %s", e.Status, e.Code, e.Message) }

// getJSON fetches path and decodes its JSON into out.
func (c *Console) getJSON(r *http.Request, s *session, path string, out any) error {
	a, err := c.call(r, s, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	return decodeAnswer(a, out)
}

func decodeAnswer(a answer, out any) error {
	if a.status/100 != 2 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(a.body, &e)
		return &apiError{Status: a.status, Code: e.Error.Code, Message: e.Error.Message}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(a.body, out); err != nil {
		return fmt.Errorf("console: the API's answer does not decode: %w", err)
	}
	return nil
}

// apiFailed renders the API's refusal on the error page: 401 (the token
// was removed from the configuration) signs the person out.
func (c *Console) apiFailed(w http.ResponseWriter, r *http.Request, s *session, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		if ae.Status == http.StatusUnauthorized {
			setCookie(w, r, "", time.Time{})
			http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
			return
		}
		c.render(w, r, ae.Status, "error", view{Title: "error.title", Session: s,
			Data: errorData{Status: ae.Status, Key: "error.api", Detail: ae.Message}})
		return
	}
	c.cfg.Logger.Error("console: API call", "err", err)
	c.fail(w, r, s, http.StatusBadGateway, "error.internal")
}
