#!/usr/bin/env bash
# The newcomer's first run: start Postgres if needed, a fresh demo database,
# the ledger, and paysim playing four providers with a few thousand payments
# (duplicated, reordered, retried), then paysim's report. Exits with paysim's
# status: non-zero on any payment that does not match its ground truth.
set -euo pipefail
cd "$(dirname "$0")/.."
payments=${PAYMENTS:-3000}
addr=${DEMO_ADDR:-127.0.0.1:8080}
db=payledger_demo
work=$(mktemp -d)
trap 'kill "${ledger_pid:-}" 2>/dev/null || true; wait "${ledger_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

scripts/postgres-up.sh
psql -h 127.0.0.1 -U postgres -d postgres -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
echo "demo: building ledger and paysim" >&2
go build -o "$work/ledger" ./cmd/ledger
go build -o "$work/paysim" ./cmd/paysim

eval "$("$work/paysim" env)"
export LEDGER_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
export LEDGER_HTTP_ADDR=$addr LEDGER_LOG_LEVEL=warn LEDGER_EVENTSTORE_URL=${LEDGER_EVENTSTORE_URL:-}
"$work/ledger" serve 2>"$work/ledger.log" &
ledger_pid=$!
echo "demo: ledger on http://$addr (logs: $work/ledger.log), paysim sending $payments payments" >&2

set +e
"$work/paysim" run --ledger "http://$addr" --payments "$payments" --pagarme-key "$work/pagarme.pem" "$@"
status=$?
set -e
if [ $status -ne 0 ]; then
  echo "demo: paysim reported a mismatch; last ledger log lines:" >&2
  tail -n 20 "$work/ledger.log" >&2
fi
exit $status
