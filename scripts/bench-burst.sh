#!/usr/bin/env bash
# How fast the background fetches catch up with a burst (BENCHMARKS.md,
# "Background fetches after a burst"): paysim sends PAYMENTS (1000) Mercado
# Pago payments' notifications as fast as the ledger acknowledges them, and
# this prints how long after the last stored notification every fetch job
# had finished and every observation was stored, read from the database (one
# clock), beside paysim's own figures (ack latency, time to read every
# payment back matching). A scratch database is created and dropped.
#
#   scripts/bench-burst.sh                 # this tree's ledger
#   LEDGER_BIN=/tmp/old/ledger scripts/bench-burst.sh   # another build
#   LEDGER_JOBS_WORKERS=8 scripts/bench-burst.sh        # any LEDGER_* applies
#
# Extra arguments go to paysim run. Prints one JSON line.
set -euo pipefail
cd "$(dirname "$0")/.."
payments=${PAYMENTS:-1000}
addr=${BURST_ADDR:-127.0.0.1:8097}
api=${BURST_API_ADDR:-127.0.0.1:8197}
db=payledger_burst_$$
work=$(mktemp -d)
psql=(psql -h 127.0.0.1 -U postgres -X -qAt)
cleanup() {
  kill "${ledger_pid:-}" 2>/dev/null || true
  wait "${ledger_pid:-}" 2>/dev/null || true
  "${psql[@]}" -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

scripts/postgres-up.sh >/dev/null
"${psql[@]}" -d postgres -c "CREATE DATABASE $db"
ledger=${LEDGER_BIN:-}
if [ -z "$ledger" ]; then
  go build -o "$work/ledger" ./cmd/ledger
  ledger=$work/ledger
fi
go build -o "$work/paysim" ./cmd/paysim

eval "$("$work/paysim" env --api-addr "$api")"
export LEDGER_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
export LEDGER_HTTP_ADDR=$addr LEDGER_LOG_LEVEL=${LEDGER_LOG_LEVEL:-warn} LEDGER_EVENTSTORE_URL=
"$ledger" serve 2>"$work/ledger.log" &
ledger_pid=$!

# A burst: no mid-run snapshot (it holds deliveries back), no lag sampling
# (its reads would compete with the fetches), no books check.
set +e
"$work/paysim" run --ledger "http://$addr" --api-addr "$api" --providers mercadopago --payments "$payments" \
  --recorded-snapshot 0 --lag-samples 0 --books=false --json "$@" >"$work/report.json" 2>"$work/paysim.log"
status=$?
set -e
if [ $status -ne 0 ]; then
  echo "bench-burst: paysim failed ($status); last ledger log lines:" >&2
  tail -n 20 "$work/ledger.log" >&2
  tail -n 5 "$work/paysim.log" >&2
  exit $status
fi

# A fetch chained after one that was running (a notification during it) may
# still be due when paysim is done: wait for it, 30 s at most.
for _ in $(seq 300); do
  [ "$("${psql[@]}" -d "$db" -c "SELECT count(*) FROM river_job WHERE kind = 'enrich_payment' AND state <> 'completed'")" = 0 ] && break
  sleep 0.1
done

# Times are the database's: recorded_at is the appending transaction's
# now(), finalized_at River's completion time.
figures=$("${psql[@]}" -d "$db" -F' ' <<'SQL'
WITH n AS (SELECT max(recorded_at) AS last, count(*) AS c FROM es_events WHERE type = 'payment.notified.v1'),
     o AS (SELECT max(recorded_at) AS last FROM es_events WHERE type = 'payment.status_observed.v1'),
     j AS (SELECT max(finalized_at) FILTER (WHERE state = 'completed') AS last,
                  count(*) AS c, count(*) FILTER (WHERE state <> 'completed') AS unfinished
           FROM river_job WHERE kind = 'enrich_payment')
SELECT n.c, j.c, j.unfinished,
       round(extract(epoch FROM j.last - n.last) * 1000),
       round(extract(epoch FROM o.last - n.last) * 1000),
       (SELECT count(*) FROM payments WHERE notified_only)
FROM n, o, j
SQL
)
read -r notified fetch_jobs unfinished jobs_ms observed_ms notified_only <<<"$figures"
python3 - "$work/report.json" "$payments" "$notified" "$fetch_jobs" "$unfinished" "$jobs_ms" "$observed_ms" "$notified_only" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
payments, notified, jobs, unfinished, jobs_ms, observed_ms, notified_only = sys.argv[2:]
print(json.dumps({
    "ok": r["ok"], "payments": int(payments), "deliveries": r["deliveries"], "notifications_stored": int(notified),
    "fetch_jobs": int(jobs), "fetch_jobs_unfinished": int(unfinished), "payments_notified_only": int(notified_only),
    "fetched_after_last_notification_ms": float(jobs_ms), "observed_after_last_notification_ms": float(observed_ms),
    "delivery_s": round(r["delivery_seconds"], 2), "settle_s": round(r["settle_seconds"], 2),
    "ack_p50_ms": r["ack_latency_ms"]["p50"], "ack_p99_ms": r["ack_latency_ms"]["p99"], "ack_max_ms": r["ack_latency_ms"]["max"],
    "api_fetches": r["api_fetches"].get("mercadopago", 0),
}))
PY
