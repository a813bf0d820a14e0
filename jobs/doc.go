// Package jobs runs payledger's background work on River, a Postgres job
// queue: work the event stream causes but that must not happen on the
// request path. Enrichment (EnrichKind) fetches a provider's own view of a
// payment it notified us about without a status and appends what it states
// (a domain.PaymentStatusObserved, and the fee where the answer has one);
// fee fetching (FeeKind) appends the fee a provider states only in its API
// (Stripe's balance transaction) after a success, retrying while it is not
// there yet. Every appended fact's event ID derives from its content, so a
// fetch that runs twice stores it once.
//
// Jobs are enqueued in the projector's batch transaction (the Enqueuer
// satisfies projections.FollowUp), so a job exists exactly when the
// read-model change that caused it committed. Failed jobs retry with
// internal/backoff between Config.RetryMin and RetryMax; after MaxAttempts
// they are discarded and kept: the dead-letter queue (DeadLetters,
// RetryDeadLetter).
//
// Gate (gate.go) is the per-provider rate limit and circuit breaker that
// provider checks go through (x/time/rate, sony/gobreaker). The Reconciler
// (reconcile.go, issue 17) checks payments in doubt through it and logs
// each check as a domain.ReconciliationChecked in the payment's stream;
// ReconcilePassKind runs a pass periodically (one at a time, snoozing to
// continue when its budget ends) and ReconcilePaymentKind one check on
// demand (EnqueueReconcile).
//
// Reviews (issue 18): a check that reaches the provider and still finds a
// payment waiting past its deadline (ReconcilerConfig.ReviewAfter, per
// provider ReviewAfterBy) appends a domain.ReviewOpened in the check's own
// batch; ReviewSweepKind (review_sweep.go) periodically opens a review per
// anomaly of the payments an AnomalySource flags. Review IDs derive from
// the payment, reason and cause, so neither ever opens one twice.
//
// jobs imports domain, eventstore, River and those two; it must not import api,
// projections, an event store adapter or a provider package (it declares
// StatusFetcher, FeeFetcher, Appender and AnomalySource where it uses them). ARCHITECTURE.md
// ("Mercado Pago enrichment", "Fees") has the uniqueness and retry rules.
package jobs
