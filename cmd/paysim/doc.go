// Command paysim is a payment-provider simulator with its own ground truth.
// It proves the ledger's promise — nothing lost, nothing stored twice, every
// payment in the right state — under at-least-once delivery, and measures
// acknowledgement latency and throughput while doing so.
//
// A run generates --payments payments spread over --providers, each
// following a realistic lifecycle (success, failure then success, cancel,
// partial and full refunds, disputes won and lost, Pix/boleto paid late,
// chargebacks), deterministically from --seed. Each lifecycle is a short
// list of steps: the webhook the provider sends and the truth after it, as
// the read API must show it. Webhooks are built and signed as each provider
// does, through the providers' own Sign functions: Stripe (event JSON,
// Stripe-Signature per attempt), Mercado Pago (status-less notification,
// ?data.id=…&type=payment, x-signature over the manifest, x-request-id),
// Asaas (whole payment object, dateCreated in São Paulo time,
// asaas-access-token) and Pagar.me (whole charge, RS256 with a key paysim
// generates, served as a JWKS).
//
// paysim serves the providers' APIs on --api-addr from the same truth, as
// far as the webhooks sent so far: Mercado Pago GET
// /mercadopago/v1/payments/{id} (the ledger fetches every notified
// payment), Asaas GET /asaas/v3/payments/{id}, Pagar.me GET
// /pagarme/core/v5/charges/{id}, and GET /.well-known/jwks.json.
//
// Delivery is at least once: --dup of the webhooks are sent twice (half
// racing the original, half later), --reorder of the payments have their
// deliveries shuffled, each waits up to --max-delay (late payments
// --late-delay more), --concurrency requests are in flight, and every
// non-2xx answer (Asaas: non-200) or timeout is retried with exponential
// backoff and jitter until acknowledged or the budget (--retry-attempts,
// --retry-budget) is spent. Then paysim polls GET /v1/payments/{provider}/{id}
// until every payment matches its truth (status, amount, amount_refunded,
// currency, and the event count where it is known) or --settle passes, and
// prints the report: payments matched/wrong/missing with the first
// mismatches, webhooks delivered/duplicated/retried/given up, the ledger's
// outcomes (a webhook "accepted" twice would be a duplicate stored), ack
// latency p50/p95/p99, throughput. It exits 1 on any wrong or missing
// payment, any webhook never acknowledged or accepted twice; 2 on bad flags.
//
// What is timed is the target, not paysim: an attempt's ack latency runs
// from the moment its signed request leaves to its answer read; Pagar.me's
// RS256 signatures (a millisecond of CPU each, and a body's never changes)
// are computed on every core before the run starts, as a provider signs on
// machines of its own; with --rate the clock starts once the first wave of
// deliveries is spawned and waiting for its starts, and garbage collected.
//
// While delivering, paysim measures end-to-end lag — from sending a webhook
// the ledger answered "accepted" to GET /v1/payments/{provider}/{id} showing
// it — for a sample of deliveries (at most --lag-samples a second, their
// reads paced to --lag-reads a second so measuring does not become the
// load). The test cannot be satisfied early: the events endpoint (which reads
// the event store) gives the revision r the acknowledged event was stored
// at, and the payment is visible once the read model's event_count reaches
// r+1 — the read model holds a prefix of the stream, so events other than
// ours (Mercado Pago's status observations) cannot make it so before ours
// is applied. See lag.go.
//
// Every delivery carries Paysim-Event-Id: {provider}:{event ID}, the
// identity the ledger deduplicates on; the ledger ignores it. `paysim floor`
// is the ingest floor the ledger is compared with (scripts/bench-load.sh): an
// HTTP server doing one INSERT … ON CONFLICT DO NOTHING per delivery, keyed on
// that header, into its own table (floor_events, created if needed), with a
// pool of 20 connections like the ledger's unless the URL sets
// pool_max_conns. It has no read API, so it is driven with --ack-only.
//
// Usage:
//
//	paysim env [flags]   print `export LEDGER_…=…` lines configuring a ledger for paysim
//	paysim [run] [flags] simulate against --ledger and report
//	paysim floor [--listen ADDR] [--database URL]
//	                     serve the one-INSERT floor [127.0.0.1:8086,
//	                     postgres://postgres@127.0.0.1:5432/payledger_floor]
//
// Typical use:
//
//	eval "$(go run ./cmd/paysim env)"
//	go run ./cmd/ledger serve &
//	go run ./cmd/paysim --payments 2000 --pagarme-key /tmp/paysim.pem
//
// Flags (defaults in brackets):
//
//	--ledger URL            ledger base URL [http://127.0.0.1:8080]
//	--token T               read-API Bearer token, role read [dev-read-token]
//	--payments N            payments to simulate [1000]
//	--seed S                same seed, same payments and payloads [1]
//	--providers LIST        stripe,mercadopago,asaas,pagarme [all four]
//	--skip-lifecycles LIST  provider/lifecycle pairs not to generate
//	--api-addr ADDR         fake provider APIs; fixed so `env` can name them [127.0.0.1:8089]
//	--pagarme-key FILE      RS256 key PEM, read or created (empty: new key per run)
//	--dup F                 share of webhooks sent twice [0.2]
//	--reorder F             share of payments with shuffled deliveries [0.3]
//	--max-delay D           random wait before each delivery [20ms]
//	--late-delay D          extra wait for a late Pix/boleto confirmation [500ms]
//	--concurrency N         requests in flight [32]
//	--rate N                open loop: start N deliveries/s whatever the
//	                        ledger's pace, at most --concurrency in flight;
//	                        starts finding them all busy are reported as
//	                        late starts [0: closed loop]
//	--ack-only              deliver and report acknowledgements only, for a
//	                        target without the read API (paysim floor): no
//	                        convergence check, no lag
//	--lag-samples N         lag: accepted deliveries sampled per second at
//	                        most [20; 0: no lag measurement]
//	--lag-interval D        lag: pause between two reads of one sample [5ms]
//	--lag-reads N           lag: read-API requests per second at most [200]
//	--retry-attempts N      attempts per delivery [8]
//	--retry-budget D        give up this long after the first attempt [30s]
//	--retry-base D, --retry-max D  backoff start and cap [100ms, 5s]
//	--timeout D             per attempt [10s]
//	--settle D              wait this long for convergence [60s]
//	--ready-timeout D       wait this long for the ledger's /readyz [30s]
//	--json                  report as JSON on stdout
//	--progress              progress line even when stderr is not a terminal
//	--stripe-secret, --mercadopago-secret, --mercadopago-token, --asaas-token,
//	--asaas-api-key, --pagarme-api-key   credentials (defaults match `paysim env`)
//
// paysim imports domain, the providers' signing helpers, pgx (for the
// floor's own table) and the standard library only; it never reads the
// ledger's database: the read API is the contract it checks.
package main
