package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/projections"
)

var _ DeadLetterReader = (*projections.DeadLetters)(nil)

// fakeDeadLetters is an empty dead-letter queue: every entry is unknown.
type fakeDeadLetters struct{}

func (fakeDeadLetters) ListDeadLetters(context.Context, domain.DeadLetterQuery) (domain.DeadLetterPage, error) {
	return domain.DeadLetterPage{}, nil
}

func (fakeDeadLetters) DeadLetter(context.Context, int64) (domain.DeadLetter, error) {
	return domain.DeadLetter{}, &domain.Error{Kind: domain.KindNotFound, Op: "fake: dead letter", Msg: "no such dead letter"}
}

func (f fakeDeadLetters) Retry(ctx context.Context, id int64, _ string) (domain.DeadLetter, error) {
	return f.DeadLetter(ctx, id)
}

func (fakeDeadLetters) RetryMatching(context.Context, domain.DeadLetterFilter, string) (int, error) {
	return 0, nil
}

func TestDeadLetterRoutesRefuse(t *testing.T) {
	srv := newEnv(t).server(t)
	post := func(path, body, token string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		return req
	}
	tests := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"bad kind", get("/v1/dead-letters?kind=poison", readToken), 400},
		{"bad state", get("/v1/dead-letters?state=closed", readToken), 400},
		{"bad limit", get("/v1/dead-letters?limit=501", readToken), 400},
		{"repeated param", get("/v1/dead-letters?kind=job&kind=collision", readToken), 400},
		{"unknown param", get("/v1/dead-letters?sort=x", readToken), 400},
		{"no token", get("/v1/dead-letters", ""), 401},
		{"empty list", get("/v1/dead-letters", readToken), 200},
		{"unknown entry", get("/v1/dead-letters/7", readToken), 404},
		{"not a number", get("/v1/dead-letters/abc", readToken), 404},
		{"zero", get("/v1/dead-letters/0", readToken), 404},
		{"read token retries", post("/v1/dead-letters/7/retry", "", readToken), 403},
		{"read token bulk", post("/v1/dead-letters/retry", `{}`, readToken), 403},
		{"unknown retry", post("/v1/dead-letters/7/retry", "", adminToken), 404},
		{"bulk malformed", post("/v1/dead-letters/retry", `{"kind":`, adminToken), 400},
		{"bulk no body", post("/v1/dead-letters/retry", ``, adminToken), 400},
		{"bulk unknown field", post("/v1/dead-letters/retry", `{"kind":"job","state":"open"}`, adminToken), 400},
		{"bulk bad kind", post("/v1/dead-letters/retry", `{"kind":"poison"}`, adminToken), 400},
		{"bulk two objects", post("/v1/dead-letters/retry", `{}{}`, adminToken), 400},
		{"bulk nothing matches", post("/v1/dead-letters/retry", `{"kind":"job","cause":"enrich"}`, adminToken), 200},
		{"get on bulk path", get("/v1/dead-letters/retry", readToken), 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := serve(t, srv, tc.req)
			if res.status != tc.want {
				t.Fatalf("%d %s, want %d", res.status, res.raw, tc.want)
			}
		})
	}
}
