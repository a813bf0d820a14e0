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

var _ ReviewReader = (*projections.Queries)(nil)

// fakeReviews is a ReviewReader with no reviews unless its functions say.
type fakeReviews struct {
	ListFn   func(context.Context, domain.ReviewQuery) (domain.ReviewPage, error)
	ReviewFn func(context.Context, string) (domain.ReviewRow, error)
}

var _ ReviewReader = (*fakeReviews)(nil)

func (f *fakeReviews) ListReviews(ctx context.Context, q domain.ReviewQuery) (domain.ReviewPage, error) {
	if f.ListFn != nil {
		return f.ListFn(ctx, q)
	}
	return domain.ReviewPage{}, nil
}

func (f *fakeReviews) Review(ctx context.Context, id string) (domain.ReviewRow, error) {
	if f.ReviewFn != nil {
		return f.ReviewFn(ctx, id)
	}
	return domain.ReviewRow{}, &domain.Error{Kind: domain.KindNotFound, Op: "fake: review", Msg: "no such review"}
}

func TestReviewRoutesRefuse(t *testing.T) {
	srv := newEnv(t).server(t)
	post := func(body, token string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/v1/reviews/rev_x/resolve", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		return req
	}
	tests := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"bad state", get("/v1/reviews?state=closed", readToken), 400},
		{"bad limit", get("/v1/reviews?limit=0", readToken), 400},
		{"unknown param", get("/v1/reviews?sort=x", readToken), 400},
		{"read token", post(`{"resolution":"accepted"}`, readToken), 403},
		{"unknown review", post(`{"resolution":"accepted"}`, adminToken), 404},
		{"malformed", post(`{"resolution":`, adminToken), 400},
		{"unknown field", post(`{"resolution":"accepted","x":1}`, adminToken), 400},
		{"unknown resolution", post(`{"resolution":"maybe"}`, adminToken), 400},
		{"long note", post(`{"resolution":"other","note":"`+strings.Repeat("n", 4097)+`"}`, adminToken), 400},
		{"empty list", get("/v1/reviews", readToken), 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res := serve(t, srv, tt.req); res.status != tt.want {
				t.Errorf("%d %s, want %d", res.status, res.raw, tt.want)
			}
		})
	}
}
