#!/usr/bin/env bash
# The chaos run (issue 5, item 3), Postgres event store: paysim delivers
# PAYMENTS payments at least once, retrying like a provider, while this
# script kill -9s the ledger CHAOS_KILLS times (restarting it on the same
# address), cuts its database connections once and restarts Postgres once.
# After convergence it checks both halves of the promise:
#   - paysim: every payment in the read API equals the simulator's truth,
#     every webhook was acknowledged, none was "accepted" twice;
#   - ledger verify: every payments row equals the fold of its stream, no
#     event ID is stored twice, every stream has a row.
# Exits non-zero if either fails. Only 127.0.0.1 and the payledger_chaos
# database are touched, except the Postgres restart, which restarts the
# whole local cluster: CHAOS_PG_RESTART=0 skips it, and by default (auto) it
# is skipped while other databases have client sessions (tests running);
# CHAOS_PG_RESTART=1 restarts regardless.
#
#   PAYMENTS=12000 CHAOS_KILLS=3 CHAOS_INTERVAL=3 scripts/chaos.sh [paysim flags]
# CHAOS_KEEP=1 keeps the logs and reports (they are kept anyway on failure).
set -euo pipefail
cd "$(dirname "$0")/.."
# 12,000 payments keep paysim delivering for ~25 s on 2 cores, so that every
# fault lands while webhooks are in flight (4,000 are delivered in ~8 s and
# the later faults would only hit the convergence phase).
payments=${PAYMENTS:-12000}
kills=${CHAOS_KILLS:-3}
interval=${CHAOS_INTERVAL:-3}         # seconds between faults
pg_restart=${CHAOS_PG_RESTART:-auto}  # auto, 1 or 0
addr=${CHAOS_ADDR:-127.0.0.1:8088}
db=payledger_chaos
pg="psql -h 127.0.0.1 -p 5432 -U postgres -d postgres -X -q -v ON_ERROR_STOP=1"

case $addr in
127.0.0.1:*) ;;
*) echo "chaos: CHAOS_ADDR must be on 127.0.0.1, got $addr" >&2; exit 2 ;;
esac
command -v jq >/dev/null || { echo "chaos: jq is needed to read the reports" >&2; exit 2; }

work=$(mktemp -d)
ledger_pid='' paysim_pid=''
cleanup() {
  status=$?
  for pid in $paysim_pid $ledger_pid; do kill "$pid" 2>/dev/null || true; done
  for pid in $paysim_pid $ledger_pid; do wait "$pid" 2>/dev/null || true; done
  if [ $status -eq 0 ] && [ "${CHAOS_KEEP:-0}" = 0 ]; then rm -rf "$work"; else echo "chaos: logs kept in $work" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "chaos: $(date +%T) $*" >&2; }

scripts/postgres-up.sh
version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
$pg -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
log "building ledger and paysim"
go build -o "$work/ledger" ./cmd/ledger
go build -o "$work/paysim" ./cmd/paysim

eval "$("$work/paysim" env)"
export LEDGER_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
export LEDGER_HTTP_ADDR=$addr LEDGER_LOG_LEVEL=warn LEDGER_EVENTSTORE_URL=''

# start_ledger starts `ledger serve` and waits until /readyz answers 200.
start_ledger() {
  "$work/ledger" serve >>"$work/ledger.log" 2>&1 &
  ledger_pid=$!
  for _ in $(seq 1 120); do
    curl -fso /dev/null "http://$addr/readyz" && return 0
    kill -0 "$ledger_pid" 2>/dev/null || { log "ledger exited on start"; tail -n 20 "$work/ledger.log" >&2; return 1; }
    sleep 0.25
  done
  log "ledger not ready after 30s"; return 1
}

kill_ledger() {
  kill -9 "$ledger_pid"
  wait "$ledger_pid" 2>/dev/null || true
  n_kills=$((n_kills + 1))
  log "kill -9 ledger #$n_kills (pid $ledger_pid)"
  sleep 0.5 # down long enough for deliveries to fail and be retried
  start_ledger
  n_restarts=$((n_restarts + 1))
  log "ledger restarted (pid $ledger_pid)"
}

cut_connections() {
  local n
  n=$($pg -tAc "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '$db' AND pid <> pg_backend_pid()")
  n_cuts=$((n_cuts + 1)) n_cut_backends=$((n_cut_backends + n))
  log "cut the ledger's database connections ($n backends terminated)"
}

restart_postgres() {
  if [ "$pg_restart" = 0 ]; then log "Postgres restart skipped (CHAOS_PG_RESTART=0)"; return; fi
  local others
  others=$($pg -tAc "SELECT string_agg(DISTINCT datname, ', ') FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname IS NOT NULL AND datname <> '$db' AND pid <> pg_backend_pid()")
  if [ -n "$others" ] && [ "$pg_restart" = auto ]; then
    log "Postgres restart skipped: other databases are in use ($others); CHAOS_PG_RESTART=1 restarts anyway"
    pg_skipped=1; return
  fi
  log "WARNING: restarting the whole local PostgreSQL $version cluster (CHAOS_PG_RESTART=0 skips this)"
  pg_ctlcluster --skip-systemctl-redirect "$version" main restart || pg_ctlcluster "$version" main restart
  for _ in $(seq 1 60); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 0.5; done
  n_pg_restarts=$((n_pg_restarts + 1))
  log "Postgres is back"
}

n_kills=0 n_restarts=0 n_cuts=0 n_cut_backends=0 n_pg_restarts=0 pg_skipped=0
start_ledger
log "ledger on http://$addr (logs: $work/ledger.log); paysim sending $payments payments"
"$work/paysim" run --ledger "http://$addr" --payments "$payments" --pagarme-key "$work/pagarme.pem" \
  --retry-attempts 30 --retry-budget 120s --settle 120s --json "$@" >"$work/paysim.json" 2>"$work/paysim.log" &
paysim_pid=$!

# The faults, interval seconds apart, while paysim is still running: the
# kills spread around a connection cut and a Postgres restart.
faults=(kill)
[ "$kills" -ge 2 ] && faults+=(cut kill) || faults+=(cut)
[ "$kills" -ge 3 ] && faults+=(pg kill) || faults+=(pg)
for _ in $(seq 4 "$kills"); do faults+=(kill); done
[ "$kills" -eq 0 ] && faults=(cut pg)
started=$(date +%s)
for fault in "${faults[@]}"; do
  sleep "$interval"
  if ! kill -0 "$paysim_pid" 2>/dev/null; then log "paysim finished before the '$fault' fault"; break; fi
  case $fault in
  kill) kill_ledger ;;
  cut) cut_connections ;;
  pg) restart_postgres ;;
  esac
done

log "faults done; waiting for paysim to deliver and settle"
set +e
wait "$paysim_pid"
paysim_status=$?
paysim_pid=''
log "paysim exited $paysim_status after $(( $(date +%s) - started ))s"
"$work/ledger" verify --wait 120s >"$work/verify.txt" 2>&1
verify_status=$?
set -e

echo
echo "== chaos run: $payments payments, Postgres event store =="
echo "faults: ledger kill -9 ×$n_kills (restarts $n_restarts), connection cuts ×$n_cuts ($n_cut_backends backends terminated), Postgres restarts ×$n_pg_restarts$([ $pg_skipped = 1 ] && echo ' (skipped: cluster in use)')"
if jq -e . "$work/paysim.json" >/dev/null 2>&1; then
  jq -r '"paysim (exit \($s)): payments \(.payments) matched \(.matched) wrong \(.wrong) missing \(.missing); webhooks \(.webhooks) deliveries \(.deliveries) duplicated \(.duplicated) attempts \(.attempts) retried \(.retried) given up \(.given_up) undelivered \(.undelivered) accepted twice \(.accepted_twice); outcomes \(.outcomes | to_entries | map("\(.key) \(.value)") | join(", ")); ack p50/p99 \(.ack_latency_ms.p50)/\(.ack_latency_ms.p99) ms; delivery \(.delivery_seconds | floor)s, settle \(.settle_seconds | floor)s",
         (.mismatches // [] | .[:10][] | "  paysim mismatch: \(.payment) (\(.lifecycle)): \(.problem)"),
         (.failures // [] | .[:10][] | "  paysim failure: \(.)")' --arg s "$paysim_status" "$work/paysim.json"
else
  echo "paysim (exit $paysim_status): no JSON report; last lines:"; tail -n 20 "$work/paysim.log"
fi
echo "verify (exit $verify_status):"
sed -n '1,40p' "$work/verify.txt" | sed 's/^/  /'
echo "ledger log: $(grep -c '"level":"ERROR"' "$work/ledger.log" || true) error lines, $(grep -c 'panic' "$work/ledger.log" || true) panic lines; most frequent:"
jq -rR 'fromjson? | select(.level == "ERROR") | .msg' "$work/ledger.log" | sort | uniq -c | sort -rn | head -n 5
if [ $paysim_status -ne 0 ] || [ $verify_status -ne 0 ]; then
  echo "chaos: FAILED"
  exit 1
fi
echo "chaos: OK"
