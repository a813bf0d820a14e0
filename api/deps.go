package api

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// Provider verifies and decodes one payment provider's webhook deliveries.
// The adapters under providers/ implement it; api never imports one.
type Provider interface {
	// Name is the lower-case provider name used in the webhook route and in
	// stream names ("stripe").
	Name() string
	// Verify authenticates the raw delivery at time now. It fails with
	// KindInvalid (malformed, forged or stale signature: 400),
	// KindUnauthorized (401) or KindUnavailable (cannot check now: 503).
	// Nothing is parsed before Verify succeeds.
	Verify(ctx context.Context, header http.Header, query url.Values, body []byte, now time.Time) error
	// Parse maps a verified delivery to domain events. KindInvalid → 400. A
	// Notification without events is a valid delivery we do not track.
	Parse(ctx context.Context, header http.Header, query url.Values, body []byte) (domain.Notification, error)
}

// SourceChecker is implemented by providers that authenticate deliveries by
// where they come from as well (Asaas sends a static token, so its IP
// allow-list matters). The API checks the connection's remote address; behind
// a proxy, enforce the allow-list at the proxy instead.
type SourceChecker interface {
	AllowSource(ip netip.Addr) bool
}

// EventStore is the part of eventstore.Store the API uses: appending webhook
// facts and reading a payment's stream for the audit endpoint.
type EventStore interface {
	Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events []eventstore.EventData) (eventstore.AppendResult, error)
	ReadStream(ctx context.Context, stream string) ([]eventstore.RecordedEvent, error)
}

// PaymentReader answers payment queries from the read models.
type PaymentReader interface {
	// Payment returns one payment; an unknown one is an error wrapping
	// domain.ErrUnknownPayment.
	Payment(ctx context.Context, provider, providerPaymentID string) (domain.PaymentState, error)
	// ListPayments returns one page; a bad limit or cursor is KindInvalid.
	ListPayments(ctx context.Context, f domain.PaymentFilter) (domain.PaymentPage, error)
}

// LedgerReader answers ledger queries from the journal read model. A bad
// cursor is KindInvalid; PaymentLedger of an unknown payment is an error
// wrapping domain.ErrUnknownPayment.
type LedgerReader interface {
	// Balances returns the accounts with entries up to q.AsOf on q.Basis.
	Balances(ctx context.Context, q domain.BalanceQuery) ([]domain.AccountBalance, error)
	// Daily returns one row per account and day of q's range with activity
	// or a balance.
	Daily(ctx context.Context, q domain.DailyQuery) ([]domain.DayBalance, error)
	// Entries returns one keyset page of journal entries.
	Entries(ctx context.Context, q domain.EntryQuery) (domain.EntryPage, error)
	// PaymentLedger returns every entry of one payment, in fold order.
	PaymentLedger(ctx context.Context, provider, providerPaymentID string) ([]domain.LedgerEntry, error)
}

// Check is one readiness probe of /readyz, such as pinging Postgres or the
// event store. Run must return promptly once ctx is done.
type Check struct {
	Name string
	Run  func(ctx context.Context) error
}

// ReconciliationReader answers the reconciliation routes from the
// reconciliation log and the payments read model.
type ReconciliationReader interface {
	// Checks returns one page of the log, newest first; a bad limit or
	// cursor is KindInvalid.
	Checks(ctx context.Context, q domain.CheckQuery) (domain.CheckPage, error)
	// ReconciliationSummary counts each provider's checks since since and
	// totals the payments in doubt: not final and with no fact recorded
	// since quietSince.
	ReconciliationSummary(ctx context.Context, since, quietSince time.Time) (domain.ReconciliationSummary, error)
}

// ReviewReader answers the review queue from its read model.
type ReviewReader interface {
	// ListReviews returns one page, oldest first; a bad state, limit or
	// cursor is KindInvalid.
	ListReviews(ctx context.Context, q domain.ReviewQuery) (domain.ReviewPage, error)
	// Review returns one review; an unknown one is KindNotFound.
	Review(ctx context.Context, id string) (domain.ReviewRow, error)
}

// ReconcileEnqueuer queues an on-demand reconciliation check of one
// payment. An error of domain.KindConflict means the provider has no API
// credentials configured, so it cannot be asked (409 with its message).
type ReconcileEnqueuer interface {
	EnqueueReconcile(ctx context.Context, provider, providerPaymentID string) (jobID int64, err error)
}

// DeadLetterReader answers the dead-letter queue (projections.DeadLetters).
type DeadLetterReader interface {
	// ListDeadLetters returns one page, oldest first; a bad limit or cursor
	// is KindInvalid.
	ListDeadLetters(ctx context.Context, q domain.DeadLetterQuery) (domain.DeadLetterPage, error)
	// DeadLetter returns one entry; an unknown one is KindNotFound.
	DeadLetter(ctx context.Context, id int64) (domain.DeadLetter, error)
}

// DeadLetterRetrier retries dead letters (jobs.Retrier): each retry is a
// fact naming who asked. Retry of an entry that is not open, or of a
// collision that still collides, is KindConflict; of an unknown one
// KindNotFound. RetryMatching retries the open entries f matches when it
// starts and returns how many it retried.
type DeadLetterRetrier interface {
	Retry(ctx context.Context, id int64, by string) (domain.DeadLetter, error)
	RetryMatching(ctx context.Context, f domain.DeadLetterFilter, by string) (int, error)
}

// ProofVerifier is a Provider whose verification also says how it verified
// (which secret, which key): the webhook keeps that proof with the facts,
// so evidence can later tell a rotated secret from an altered body. The
// four adapters implement it; a Provider without it is verified with Verify.
type ProofVerifier interface {
	VerifyProof(ctx context.Context, header http.Header, query url.Values, body []byte, now time.Time) (domain.AuthProof, error)
}

// HeaderKeeper names the authenticating headers a provider's deliveries
// carry that are safe to keep with each fact (never a static token).
type HeaderKeeper interface {
	KeptHeaders() []string
}
