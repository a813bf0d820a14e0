#!/usr/bin/env bash
# Ingest under load (issue 5, item 4): a fresh database, the ledger in the
# background, then paysim at fixed offered loads (open loop, --rate) and at
# saturation (closed loop, --concurrency 64), 20% duplicates, no reordering
# or delays. Prints a markdown table: ack latency, throughput, correctness
# and the ledger's peak RSS so far (VmHWM cannot be reset between runs, so
# each row shows the running peak). Exits non-zero if any run mismatched.
#
#   RATES="500 1000 2000" SECONDS_PER_RUN=10 scripts/bench-load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rates=${RATES:-500 1000 2000}
secs=${SECONDS_PER_RUN:-10}
per_payment=${SENDS_PER_PAYMENT:-3.3} # deliveries per payment at --dup 0.2, all providers (measured: 3.2–3.4)
sat_payments=${SAT_PAYMENTS:-8000}
addr=${LOAD_ADDR:-127.0.0.1:8087}
db=payledger_load
work=$(mktemp -d)
trap 'kill "${ledger_pid:-}" 2>/dev/null || true; wait "${ledger_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

scripts/postgres-up.sh
psql -h 127.0.0.1 -U postgres -d postgres -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
echo "bench-load: building ledger and paysim" >&2
go build -o "$work/ledger" ./cmd/ledger
go build -o "$work/paysim" ./cmd/paysim

eval "$("$work/paysim" env)"
export LEDGER_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
export LEDGER_HTTP_ADDR=$addr LEDGER_LOG_LEVEL=warn LEDGER_EVENTSTORE_URL=${LEDGER_EVENTSTORE_URL:-}
"$work/ledger" serve 2>"$work/ledger.log" &
ledger_pid=$!
echo "bench-load: ledger pid $ledger_pid on http://$addr (logs: $work/ledger.log)" >&2

peak_rss_mb() { awk '/^VmHWM:/ {printf "%.0f", $2/1024}' "/proc/$ledger_pid/status"; }

rows=()
status=0
seed=$(( $(date +%s) * 16 )) # fresh payments every run: ids derive from the seed
run() { # label rate concurrency payments
  local label=$1 rate=$2 conc=$3 payments=$4 out="$work/run-$1.json"
  seed=$((seed + 1))
  echo "bench-load: $label: --rate $rate --concurrency $conc --payments $payments --seed $seed" >&2
  set +e
  "$work/paysim" run --ledger "http://$addr" --payments "$payments" --seed "$seed" --pagarme-key "$work/pagarme.pem" \
    --dup 0.2 --reorder 0 --max-delay 0 --late-delay 0 --rate "$rate" --concurrency "$conc" --json >"$out" 2>"$work/run-$label.err"
  local rc=$?
  set -e
  if ! jq -e . "$out" >/dev/null 2>&1; then
    echo "bench-load: $label: paysim failed (exit $rc):" >&2
    tail -n 5 "$work/run-$label.err" >&2
    rows+=("| $label | $rate | – | – | – | – | – | – | paysim exit $rc | $(peak_rss_mb) |")
    status=1
    return
  fi
  [ $rc -eq 0 ] || status=1
  rows+=("$(jq -r --arg name "$label" --arg rss "$(peak_rss_mb)" '
    "| \($name) | \(if .rate_per_s > 0 then (.offered_rate_per_s | floor | tostring) else "closed loop" end) | \(.late_starts) | \(.deliveries) | \(.throughput_per_s | floor) | \(.ack_latency_ms.p50) | \(.ack_latency_ms.p99) | \(.duplicated) | \(.matched)/\(.wrong)/\(.missing) | \($rss) |"' "$out")")
}

for r in $rates; do
  run "rate-$r" "$r" 32 "$(awk -v r="$r" -v s="$secs" -v k="$per_payment" 'BEGIN { printf "%d", r * s / k }')"
done
run saturation 0 64 "$sat_payments"

echo
echo "| run | offered /s | late starts | deliveries | throughput /s | ack p50 ms | ack p99 ms | duplicated | matched/wrong/missing | ledger peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
[ $status -eq 0 ] || { echo "bench-load: a run mismatched or failed; last ledger log lines:" >&2; tail -n 20 "$work/ledger.log" >&2; }
exit $status
