# payledger — the commands a newcomer needs. `make run` starts the service on
# :8080 against the local Postgres; `make test` runs every check CI runs.
SHELL := /bin/bash

# Development defaults for `make run`; override any of them in the environment.
export LEDGER_HTTP_ADDR ?= 127.0.0.1:8080
export LEDGER_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/payledger?sslmode=disable
export LEDGER_STRIPE_WEBHOOK_SECRETS ?= whsec_dev_only_secret
export LEDGER_API_TOKENS ?= read:dev-read-token,admin:dev-admin-token
export LEDGER_LOG_FORMAT ?= text

.PHONY: run test db migrate bench fuzz demo

run: db ## run the service (webhooks, read API, projector)
	go run ./cmd/ledger serve

migrate: db ## apply migrations and exit
	go run ./cmd/ledger migrate

db: ## start the local Postgres if it is down and create the dev database
	@scripts/postgres-up.sh payledger

test: ## vet, format check and the full race-enabled test suite (20m a package: the e2e packages near 10 on a loaded two-core machine)
	@scripts/postgres-up.sh
	@scripts/html-validate-up.sh
	go vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	go test -race -count=1 -timeout 20m ./...

bench: ## micro-benchmarks (figures go to BENCHMARKS.md)
	@scripts/postgres-up.sh
	go test -run '^$$' -bench . -benchmem ./...

demo: ## start Postgres, the ledger and paysim with PAYMENTS (3000) payments; prints the report
	@scripts/demo.sh

fuzz: ## run each fuzz target for FUZZTIME (default 30s)
	@scripts/fuzz.sh $${FUZZTIME:-30s}
