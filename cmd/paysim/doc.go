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
// Usage:
//
//	paysim env [flags]   print `export LEDGER_…=…` lines configuring a ledger for paysim
//	paysim [run] [flags] simulate against --ledger and report
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
// paysim imports domain, the providers' signing helpers and the standard
// library only; it never reads the ledger's database: the read API is the
// contract it checks.
package main
