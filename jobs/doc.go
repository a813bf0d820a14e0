// Package jobs runs payledger's background work on River, a Postgres job
// queue: work the event stream causes but that must not happen on the
// request path. Today that is enrichment (fetching a provider's own view of
// a payment it notified us about without saying what state it is in);
// reconciliation against the providers' APIs will be the next job kind.
//
// It is a top-level package because it fits none of the others: it is
// driven by projections (jobs are enqueued in the projector's batch
// transaction through the projections.FollowUp hook, so a job exists if and
// only if the read-model change that caused it committed), it writes to the
// event store (what a provider says becomes an event, never a direct read
// model update), and it calls the providers' status clients (declared here
// as StatusFetcher, the interface being where it is used). cmd/ledger wires
// it; api and domain know nothing of it.
//
// # Enrichment
//
// For each domain.PaymentNotified of a provider in Config.EnrichProviders,
// the Enqueuer inserts an EnrichArgs job, unique by its arguments among jobs
// not yet finished (available, pending, scheduled, retryable, running): a
// burst of notifications for one payment is one fetch. A notification that
// finds the fetch already running enqueues one more fetch to run after it
// (EnrichArgs.After), because the running fetch may have read the provider
// before the change being notified; a notification after the fetch finished
// enqueues a new fetch, since payments change.
//
// The worker fetches the payment with the provider's StatusFetcher and
// appends the returned domain.PaymentStatusObserved to the payment's
// stream. Its event ID derives from the observed content, so a fetch that
// runs twice (a retry after a crash between the append and the job's
// completion, a replay of the projection from zero re-enqueueing old
// notifications) stores the same state once; the store reports the repeat
// as a duplicate, which the worker counts as success. The projector then
// folds the observation into the read model like any other event.
//
// # Retries and the dead-letter queue
//
// A failed job (provider outage, rate limit, a payment the provider does
// not know yet) is retried with exponential backoff and jitter between
// Config.RetryMin and Config.RetryMax, up to Config.MaxAttempts attempts.
// After the last one River marks it discarded. Discarded jobs are never
// deleted (River's DiscardedJobRetentionPeriod is -1): they are the
// dead-letter queue, listed by DeadLetters and put back in line by
// Jobs.RetryDeadLetter once the cause is fixed. A job cancelled by a
// shutdown is put back as available and does not use up an attempt.
//
// jobs imports domain, eventstore and River; it must not import api,
// projections (it satisfies projections.FollowUp structurally), an event
// store adapter or a provider package.
package jobs
