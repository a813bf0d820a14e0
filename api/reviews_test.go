package api

import (
	"context"

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
