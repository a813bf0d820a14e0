package providertest

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// Provider is the webhook contract api declares as api.Provider. It is
// repeated here because providers must not import api.
type Provider interface {
	Name() string
	Verify(ctx context.Context, header http.Header, query url.Values, body []byte, now time.Time) error
	Parse(ctx context.Context, header http.Header, query url.Values, body []byte) (domain.Notification, error)
}

// Authenticator is the contract the evidence route will declare: the proof
// ingest keeps from the verifying pass, and re-verification of a stored
// delivery with it (issue 19).
type Authenticator interface {
	VerifyProof(ctx context.Context, header http.Header, query url.Values, body []byte, now time.Time) (domain.AuthProof, error)
	Authenticate(header http.Header, query url.Values, body []byte, proof domain.AuthProof) domain.Authenticity
}

// SourceChecker is the optional contract api declares for providers that
// also authenticate a delivery by its source address.
type SourceChecker interface {
	AllowSource(ip netip.Addr) bool
}

// StatusFetcher is the contract jobs declares for a provider's status
// client (jobs.StatusFetcher).
type StatusFetcher interface {
	Name() string
	Observe(ctx context.Context, providerPaymentID string) ([]domain.Event, error)
}

// FeeFetcher is the contract jobs declares for a provider's fee client
// (jobs.FeeFetcher): a nil fee and no error mean "not stated yet".
type FeeFetcher interface {
	Name() string
	FetchFee(ctx context.Context, providerPaymentID string) (*domain.FeeAssessed, error)
}

// Lister is the contract `ledger backfill` declares for a status client that
// can also list a window (cmd/ledger's lister).
type Lister interface {
	ListPage(ctx context.Context, w providers.Window, cursor string) (providers.Page, error)
	Coverage() providers.Coverage
}
