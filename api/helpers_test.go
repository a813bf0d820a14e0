package api

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payledger/payledger/internal/promtest"
)

// testNow is the server clock in tests; signatures are made relative to it.
var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	readToken  = "tok_read_7d1f0c9a"
	adminToken = "tok_admin_c0ffee42"
)

// testEnv is a server over fakes, with the knobs tests turn.
type testEnv struct {
	cfg   Config
	deps  Deps
	store *memStore
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	store := newMemStore()
	return &testEnv{
		cfg: Config{
			Now:    func() time.Time { return testNow },
			Tokens: []Token{{Role: RoleRead, Value: readToken}, {Role: RoleAdmin, Value: adminToken}},
			Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
		},
		deps: Deps{
			Store:     store,
			Payments:  &fakeReader{},
			Ledger:    &fakeLedger{},
			Providers: []Provider{newFakepay(fakeSecret)},
			Registry:  prometheus.NewRegistry(),

			Reconciliation:  &fakeRecon{},
			Reconcile:       &fakeEnqueuer{},
			Reviews:         &fakeReviews{},
			DeadLetterQueue: fakeDeadLetters{},
			Retrier:         fakeDeadLetters{},
			Seals:           noSeals{},
		},
		store: store,
	}
}

func (e *testEnv) server(t *testing.T) *Server {
	t.Helper()
	s, err := NewServer(e.cfg, e.deps)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	return s
}

// response is a recorded answer with its JSON body decoded.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// serve sends req to h and checks the answer against the OpenAPI document,
// so every answer a test sees is one the document allows.
func serve(t *testing.T, h http.Handler, req *http.Request) response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := response{status: rec.Code, header: rec.Header(), raw: rec.Body.Bytes()}
	checkContract(t, req, res.status, res.header, res.raw)
	if ct := rec.Header().Get("Content-Type"); ct == "application/json" {
		if err := json.Unmarshal(res.raw, &res.body); err != nil {
			t.Fatalf("%s %s: body is not JSON: %v\n%s", req.Method, req.URL, err, res.raw)
		}
	}
	return res
}

// errorCode returns error.code of an error body ("" if there is none).
func (r response) errorCode() string {
	e, _ := r.body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func (r response) errorMessage() string {
	e, _ := r.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

func get(path, token string) *http.Request {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// signedWebhook is a fakepay delivery signed at signedAt.
func signedWebhook(body []byte, signedAt time.Time) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/"+fakeName, bytes.NewReader(body))
	req.Header.Set(fakeSigHeader, fakeSign(fakeSecret, signedAt, body))
	return req
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// metricValue is promtest.Value.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	return promtest.Value(t, reg, name, labels)
}
