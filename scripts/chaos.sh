#!/usr/bin/env bash
# The chaos run (issue 5, item 3): paysim delivers PAYMENTS payments at
# least once, retrying like a provider, while this script kill -9s the
# ledger CHAOS_KILLS times (restarting it on the same address), cuts its
# database connections once and restarts Postgres once.
#
# CHAOS_BACKEND picks the event store: postgres (default; events in the
# payledger_chaos database) or kurrentdb, where cmd/kurrenttest serves the
# in-memory KurrentDB node (eventstore/kurrenttest) on CHAOS_ES_ADDR
# (127.0.0.1:2113) with its control endpoint on CHAOS_ES_CONTROL
# (127.0.0.1:2114); read models and jobs stay in payledger_chaos. The
# faults then also include one KurrentDB restart (connections closed, port
# closed for CHAOS_ES_DOWN, 2s; data kept, idempotency cache emptied) and
# one drop of all its client connections, and `ledger verify` reads the
# same node.
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
#   CHAOS_BACKEND=kurrentdb scripts/chaos.sh
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
backend=${CHAOS_BACKEND:-postgres}   # postgres or kurrentdb
es_addr=${CHAOS_ES_ADDR:-127.0.0.1:2113}
es_control=${CHAOS_ES_CONTROL:-127.0.0.1:2114}
es_down=${CHAOS_ES_DOWN:-2s}          # how long a KurrentDB restart keeps the port closed
db=payledger_chaos
pg="psql -h 127.0.0.1 -p 5432 -U postgres -d postgres -X -q -v ON_ERROR_STOP=1"

case $addr in
127.0.0.1:*) ;;
*) echo "chaos: CHAOS_ADDR must be on 127.0.0.1, got $addr" >&2; exit 2 ;;
esac
case $backend in
postgres) ;;
kurrentdb)
  case "$es_addr $es_control" in
  127.0.0.1:*" "127.0.0.1:*) ;;
  *) echo "chaos: CHAOS_ES_ADDR and CHAOS_ES_CONTROL must be on 127.0.0.1" >&2; exit 2 ;;
  esac ;;
*) echo "chaos: CHAOS_BACKEND must be postgres or kurrentdb, got $backend" >&2; exit 2 ;;
esac
command -v jq >/dev/null || { echo "chaos: jq is needed to read the reports" >&2; exit 2; }

work=$(mktemp -d)
ledger_pid='' paysim_pid='' es_pid=''
cleanup() {
  status=$?
  for pid in $paysim_pid $ledger_pid; do kill "$pid" 2>/dev/null || true; done
  for pid in $paysim_pid $ledger_pid; do wait "$pid" 2>/dev/null || true; done
  # The KurrentDB node goes last: it holds the events (in memory).
  if [ -n "$es_pid" ]; then kill "$es_pid" 2>/dev/null || true; wait "$es_pid" 2>/dev/null || true; fi
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
[ "$backend" = kurrentdb ] && go build -o "$work/kurrenttest" ./cmd/kurrenttest

eval "$("$work/paysim" env)"
export LEDGER_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
export LEDGER_HTTP_ADDR=$addr LEDGER_LOG_LEVEL=warn LEDGER_EVENTSTORE_URL=''

# start_kurrentdb starts the in-memory KurrentDB node and points the ledger
# (serve and verify) at it. It prints its connection string once it listens.
start_kurrentdb() {
  "$work/kurrenttest" --addr "$es_addr" --control "$es_control" >"$work/kurrenttest.url" 2>"$work/kurrenttest.log" &
  es_pid=$!
  for _ in $(seq 1 100); do
    if [ -s "$work/kurrenttest.url" ]; then
      LEDGER_EVENTSTORE_URL=$(head -n 1 "$work/kurrenttest.url")
      export LEDGER_EVENTSTORE_URL
      log "KurrentDB (cmd/kurrenttest, in memory) at $LEDGER_EVENTSTORE_URL, control http://$es_control"
      return 0
    fi
    kill -0 "$es_pid" 2>/dev/null || { log "kurrenttest exited on start"; cat "$work/kurrenttest.log" >&2; return 1; }
    sleep 0.1
  done
  log "kurrenttest not listening after 10s"; return 1
}

# es_fault asks the node for a fault (restart or drop) and prints its
# JSON reply; the reply comes once the fault is over.
es_fault() {
  curl -fsS --max-time 90 -X POST "http://$es_control/$1"
}

restart_kurrentdb() {
  local rep n
  rep=$(es_fault "restart?down=$es_down")
  n=$(jq -r .connections_closed <<<"$rep")
  n_es_restarts=$((n_es_restarts + 1)) n_es_restart_conns=$((n_es_restart_conns + n))
  log "restarted KurrentDB ($n connections closed, port closed for $es_down, idempotency cache emptied)"
}

drop_kurrentdb() {
  local rep n
  rep=$(es_fault drop)
  n=$(jq -r .connections_closed <<<"$rep")
  n_es_drops=$((n_es_drops + 1)) n_es_drop_conns=$((n_es_drop_conns + n))
  log "dropped KurrentDB's client connections ($n closed)"
}

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
n_es_restarts=0 n_es_restart_conns=0 n_es_drops=0 n_es_drop_conns=0
[ "$backend" = kurrentdb ] && start_kurrentdb
start_ledger
log "ledger on http://$addr (logs: $work/ledger.log); paysim sending $payments payments"
# Settle up to 300 s (paysim stops as soon as every payment matches): a
# status fetch claimed by a killed ledger is only rescued by River after
# LEDGER_JOBS_RESCUE_AFTER (3 min) plus up to 30 s, then retried; until then
# its Mercado Pago payment is still pending. 120 s left 5–7 payments
# pending in loaded runs.
"$work/paysim" run --ledger "http://$addr" --payments "$payments" --pagarme-key "$work/pagarme.pem" \
  --retry-attempts 30 --retry-budget 120s --settle 300s --json "$@" >"$work/paysim.json" 2>"$work/paysim.log" &
paysim_pid=$!

# The faults, interval seconds apart, while paysim is still running: the
# kills spread around a connection cut and a Postgres restart, and with
# KurrentDB around a drop of its connections and a restart of the node.
es=0; [ "$backend" = kurrentdb ] && es=1
faults=(kill)
[ $es = 1 ] && faults+=(es-drop)
[ "$kills" -ge 2 ] && faults+=(cut kill) || faults+=(cut)
[ $es = 1 ] && faults+=(es-restart)
[ "$kills" -ge 3 ] && faults+=(pg kill) || faults+=(pg)
for _ in $(seq 4 "$kills"); do faults+=(kill); done
if [ "$kills" -eq 0 ]; then
  faults=(cut pg)
  [ $es = 1 ] && faults=(es-drop cut es-restart pg)
fi
started=$(date +%s)
for fault in "${faults[@]}"; do
  sleep "$interval"
  if ! kill -0 "$paysim_pid" 2>/dev/null; then log "paysim finished before the '$fault' fault"; break; fi
  case $fault in
  kill) kill_ledger ;;
  cut) cut_connections ;;
  pg) restart_postgres ;;
  es-restart) restart_kurrentdb ;;
  es-drop) drop_kurrentdb ;;
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
# On KurrentDB, verify cannot list streams or look event IDs up, so the
# node audits its own log: every payment stream must have a read-model row
# (one stream per payment), and no event ID may be stored twice anywhere.
es_audit_status=0
if [ $es = 1 ]; then
  es_status=$(curl -fsS --max-time 30 "http://$es_control/status?prefix=payment-")
  es_streams=$(jq -r .tally.streams <<<"$es_status") es_events=$(jq -r .tally.events <<<"$es_status")
  es_dups=$(jq -r .tally.duplicate_ids <<<"$es_status")
  rows=$(sed -n 's/^payments checked \([0-9]*\),.*/\1/p' "$work/verify.txt")
  folded=$(sed -n 's/^  events folded \([0-9]*\);.*/\1/p' "$work/verify.txt")
  if [ "$es_dups" != 0 ] || [ "$es_streams" != "${rows:-x}" ]; then es_audit_status=1; fi
fi
set -e

echo
if [ $es = 1 ]; then
  echo "== chaos run: $payments payments, KurrentDB event store (cmd/kurrenttest, in memory; read models in Postgres) =="
else
  echo "== chaos run: $payments payments, Postgres event store =="
fi
echo "faults: ledger kill -9 ×$n_kills (restarts $n_restarts), connection cuts ×$n_cuts ($n_cut_backends backends terminated), Postgres restarts ×$n_pg_restarts$([ $pg_skipped = 1 ] && echo ' (skipped: cluster in use)')$(
  [ $es = 1 ] && echo ", KurrentDB restarts ×$n_es_restarts ($n_es_restart_conns connections closed, down $es_down each), KurrentDB connection drops ×$n_es_drops ($n_es_drop_conns connections closed)")"
if jq -e . "$work/paysim.json" >/dev/null 2>&1; then
  jq -r '"paysim (exit \($s)): payments \(.payments) matched \(.matched) wrong \(.wrong) missing \(.missing); webhooks \(.webhooks) deliveries \(.deliveries) duplicated \(.duplicated) attempts \(.attempts) retried \(.retried) given up \(.given_up) undelivered \(.undelivered) accepted twice \(.accepted_twice); outcomes \(.outcomes | to_entries | map("\(.key) \(.value)") | join(", ")); ack p50/p99 \(.ack_latency_ms.p50)/\(.ack_latency_ms.p99) ms; delivery \(.delivery_seconds | floor)s, settle \(.settle_seconds | floor)s",
         (.mismatches // [] | .[:10][] | "  paysim mismatch: \(.payment) (\(.lifecycle)): \(.problem)"),
         (.failures // [] | .[:10][] | "  paysim failure: \(.)")' --arg s "$paysim_status" "$work/paysim.json"
else
  echo "paysim (exit $paysim_status): no JSON report; last lines:"; tail -n 20 "$work/paysim.log"
fi
echo "verify (exit $verify_status):"
sed -n '1,40p' "$work/verify.txt" | sed 's/^/  /'
if [ $es = 1 ]; then
  echo "KurrentDB audit (exit $es_audit_status): payment streams $es_streams (read-model rows ${rows:-?}), events $es_events (verify folded ${folded:-?}), event IDs stored twice $es_dups"
fi
echo "ledger log: $(grep -c '"level":"ERROR"' "$work/ledger.log" || true) error lines, $(grep -c 'panic' "$work/ledger.log" || true) panic lines; most frequent:"
jq -rR 'fromjson? | select(.level == "ERROR") | .msg' "$work/ledger.log" | sort | uniq -c | sort -rn | head -n 5
if [ $es = 1 ]; then
  echo "kurrenttest: $es_status"
  sed 's/^/  /' "$work/kurrenttest.log"
fi
if [ $paysim_status -ne 0 ] || [ $verify_status -ne 0 ] || [ $es_audit_status -ne 0 ]; then
  echo "chaos: FAILED"
  exit 1
fi
echo "chaos: OK"
