#!/usr/bin/env bash
# The reconciliation pass (issue 17; BENCHMARKS.md, "Reconciliation pass").
#
# MODE=pass (default): how fast one `ledger reconcile` pass goes over
# PAYMENTS (100000) payments in doubt. A scratch database, `ledger serve`
# (LEDGER_RECONCILE_INTERVAL=0: no pass of its own) and `paysim run
# --providers $PROVIDER --drop 1`: every payment gets its first webhook and
# nothing after, so the ledger holds it pending while paysim's fake API
# shows its outcome. paysim's --after-send hook waits until the read model
# holds every payment (notifications enriched), then times the pass
# (`ledger reconcile --provider $PROVIDER --older-than 0s --json`) while
# the fake API still serves; paysim's read-back then checks that every
# payment matches its ground truth, i.e. that the pass corrected them all.
# Prints one JSON line: the pass's checks, wall clock, payments/s, the
# seeding time and paysim's verdict.
#
#   scripts/bench-reconcile.sh                                   # 100000 payments, LEDGER_RECONCILE_RATE=1000
#   PAYMENTS=2000 LEDGER_RECONCILE_RATE=50 scripts/bench-reconcile.sh   # the limiter bounds it
#
# PROVIDER defaults to stripe: its check is one GET of the payment intent
# (a second, the disputes list, only for a disputed charge; the fee of an
# observed capture is fetched afterwards by serve's jobs, as after the
# webhook). Mercado Pago cannot be put in doubt this way: its notifications
# carry no status, every one is followed by a fetch of the payment, and
# with every step of the ground truth already visible that fetch sees the
# outcome the dropped notifications would have announced.
#
# MODE=beside: the webhook path's ack latency at a fixed offered load
# (RATE_INGEST, 1000/s, open loop as bench-load.sh: --rate, --concurrency
# 128, 20% duplicates, no reordering or delays) with and without a pass
# running beside it, interleaved: PAIRS (3) times, a backlog of BACKLOG
# (20000) Stripe payments in doubt is seeded (paysim --drop 1 on its
# own fake API, held serving by its --after-send hook), then run A (ingest
# alone) and run B (ingest while `ledger reconcile` corrects the backlog
# at LEDGER_RECONCILE_RATE). The ingest runs send Mercado Pago, Asaas and
# Pagar.me webhooks to the same serve and database (serve's Stripe API
# base is the backlog's fake API, for the fee fetches its corrections
# cause; the others are the ingest's). The
# backlog's paysim then checks every backlog payment was corrected. Prints
# a markdown table: per run, ack p50/p99, throughput, whether the pass
# covered the whole ingest run, and the medians.
#
#   MODE=beside PAIRS=3 BACKLOG=20000 SECONDS_PER_RUN=15 scripts/bench-reconcile.sh
#
# Extra LEDGER_* variables apply to serve and the pass; LEDGER_BIN runs
# another build of the ledger (serve and the pass).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${MODE:-pass}
payments=${PAYMENTS:-100000}
provider=${PROVIDER:-stripe}
export LEDGER_RECONCILE_RATE=${LEDGER_RECONCILE_RATE:-1000}
addr=${RECONCILE_ADDR:-127.0.0.1:8077}
api=${RECONCILE_API_ADDR:-127.0.0.1:8177}         # the backlog's (MODE=pass: the only) fake APIs
ingest_api=${RECONCILE_INGEST_API_ADDR:-127.0.0.1:8178} # MODE=beside: the ingest runs' fake APIs
db=payledger_reconcile_$$
work=$(mktemp -d)
psql=(psql -h 127.0.0.1 -U postgres -X -qAt)
cleanup() {
  for pid in ${backlog_pid:-} ${pass_pid:-} ${ledger_pid:-}; do kill "$pid" 2>/dev/null || true; done
  for pid in ${backlog_pid:-} ${pass_pid:-} ${ledger_pid:-}; do wait "$pid" 2>/dev/null || true; done
  "${psql[@]}" -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

scripts/postgres-up.sh >/dev/null
"${psql[@]}" -d postgres -c "CREATE DATABASE $db"
echo "bench-reconcile: building ledger and paysim" >&2
if [ -n "${LEDGER_BIN:-}" ]; then
  cp "$LEDGER_BIN" "$work/ledger" # another build
else
  go build -o "$work/ledger" ./cmd/ledger
fi
go build -o "$work/paysim" ./cmd/paysim
export PATH=$work:$PATH

export LEDGER_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
export LEDGER_HTTP_ADDR=$addr LEDGER_LOG_LEVEL=${LEDGER_LOG_LEVEL:-warn} LEDGER_RECONCILE_INTERVAL=0
if [ "$mode" = beside ]; then
  eval "$(paysim env --api-addr "$ingest_api")"
  export LEDGER_STRIPE_API_BASE=http://$api/stripe # the backlog's
  provider=stripe
else
  eval "$(paysim env --api-addr "$api")"
fi

ledger serve 2>>"$work/ledger.log" &
ledger_pid=$!
for _ in $(seq 1 100); do
  curl -fso /dev/null "http://$addr/readyz" && break
  sleep 0.2
done
curl -fso /dev/null "http://$addr/readyz" || { echo "bench-reconcile: serve did not start:" >&2; tail -n 20 "$work/ledger.log" >&2; exit 1; }

# caught-up.sh expected: waits (up to 10 min) until the read model holds
# expected $provider payments, none known only from its notification, so
# that the pass selects them all.
cat >"$work/caught-up.sh" <<EOF
#!/bin/sh
i=0
while [ \$i -lt 3000 ]; do
  got=\$(${psql[*]} -d $db -c "SELECT count(*) FILTER (WHERE NOT notified_only) FROM payments WHERE provider = '$provider'")
  [ "\$got" -ge "\$1" ] && exit 0
  sleep 0.2
  i=\$((i + 1))
done
echo "bench-reconcile: the read model holds \$got of \$1 $provider payments after 10 minutes" >&2
exit 1
EOF
chmod +x "$work/caught-up.sh"

now_ms() { date +%s%3N; }

if [ "$mode" = pass ]; then
  # The hook: wait for the read model, then the measured pass.
  cat >"$work/pass.sh" <<EOF
#!/bin/sh
set -e
date +%s%3N >$work/sent
$work/caught-up.sh $payments
date +%s%3N >$work/t0
set +e
ledger reconcile --provider $provider --older-than 0s --json >$work/pass.json 2>$work/pass.err
echo \$? >$work/pass.rc
date +%s%3N >$work/t1
exit 0
EOF
  chmod +x "$work/pass.sh"
  start=$(now_ms)
  echo "bench-reconcile: seeding $payments $provider payments in doubt, then the pass at LEDGER_RECONCILE_RATE=$LEDGER_RECONCILE_RATE" >&2
  set +e
  paysim run --ledger "http://$addr" --providers "$provider" --payments "$payments" --seed "${SEED:-$(date +%s)}" \
    --api-addr "$api" --drop 1 --dup 0 --reorder 0 --max-delay 0 --late-delay 0 --concurrency 64 \
    --lag-samples 0 --books=false --recorded-snapshot 0 --settle "${SETTLE:-10m}" --json --after-send "$work/pass.sh" "$@" \
    >"$work/paysim.json" 2>"$work/paysim.err"
  rc=$?
  set -e
  if [ ! -s "$work/pass.json" ]; then
    echo "bench-reconcile: no pass ran (paysim exit $rc):" >&2
    tail -n 20 "$work/paysim.err" "$work/ledger.log" "$work"/pass.err >&2 || true
    exit 1
  fi
  jq -c --slurpfile s "$work/paysim.json" --argjson start "$start" --argjson sent "$(cat "$work/sent")" \
    --argjson t0 "$(cat "$work/t0")" --argjson t1 "$(cat "$work/t1")" --argjson rc "$(cat "$work/pass.rc")" \
    --argjson rate "$LEDGER_RECONCILE_RATE" --arg provider "$provider" '
    (($t1 - $t0) / 1000) as $secs | {
      provider: $provider, payments: $s[0].payments, rate_per_s: $rate,
      seed_deliveries: $s[0].deliveries, seed_send_seconds: (($sent - $start) / 1000),
      seed_caught_up_seconds: (($t0 - $sent) / 1000), seed_ack_p99_ms: $s[0].ack_latency_ms.p99,
      pass_checked: .checked, pass_failed: .failed, pass_remaining: .remaining, pass_exit: $rc,
      pass_outcomes: (.providers[] | select(.provider == $provider) | .checks),
      pass_corrections: (.providers[] | select(.provider == $provider) | .corrections | with_entries(select(.value > 0))),
      pass_seconds: $secs, pass_payments_per_s: ((.checked / $secs) | floor),
      api_fetches: $s[0].api_fetches, readback_seconds: $s[0].settle_seconds,
      verdict: {ok: $s[0].ok, matched: $s[0].matched, wrong: $s[0].wrong, missing: $s[0].missing}
    }' "$work/pass.json"
  [ "$rc" -eq 0 ] || { echo "bench-reconcile: paysim exit $rc:" >&2; tail -n 20 "$work/paysim.err" >&2; exit 1; }
  exit 0
fi

[ "$mode" = beside ] || { echo "bench-reconcile: MODE=$mode: want pass or beside" >&2; exit 2; }
pairs=${PAIRS:-3}
backlog=${BACKLOG:-20000}
rate_ingest=${RATE_INGEST:-1000}
secs=${SECONDS_PER_RUN:-15}
ingest_payments=$(awk -v r="$rate_ingest" -v s="$secs" 'BEGIN { printf "%d", r * s / 3.3 }')
seed=$(( $(date +%s) * 16 ))
ingest() { # seed [flag…]: one ingest run at the fixed load, its report on stdout
  local s=$1
  shift
  paysim run --ledger "http://$addr" --providers mercadopago,asaas,pagarme --payments "$ingest_payments" --seed "$s" \
    --pagarme-key "$work/pagarme.pem" --api-addr "$ingest_api" --dup 0.2 --reorder 0 --max-delay 0 --late-delay 0 \
    --rate "$rate_ingest" --concurrency 128 --lag-samples 0 --books=false --json "$@"
}
echo "bench-reconcile: warm-up" >&2
ingest $((seed + 1000000)) --rate 0 --concurrency 32 --payments 100 >/dev/null 2>"$work/warm-up.err" || true

rows=()
status=0
for k in $(seq 1 "$pairs"); do
  rm -f "$work/held" "$work/release"
  cat >"$work/hold.sh" <<EOF
#!/bin/sh
$work/caught-up.sh $((k * backlog)) || exit 1
touch $work/held
while [ ! -e $work/release ]; do sleep 0.1; done
EOF
  chmod +x "$work/hold.sh"
  echo "bench-reconcile: pair $k: seeding a backlog of $backlog Stripe payments in doubt" >&2
  paysim run --ledger "http://$addr" --providers stripe --payments "$backlog" --seed $((seed + 500000 + k)) \
    --api-addr "$api" --drop 1 --dup 0 --reorder 0 --max-delay 0 --late-delay 0 --concurrency 64 --lag-samples 0 \
    --books=false --recorded-snapshot 0 --settle 10m --json --after-send "$work/hold.sh" >"$work/backlog-$k.json" 2>"$work/backlog-$k.err" &
  backlog_pid=$!
  while [ ! -e "$work/held" ]; do
    kill -0 "$backlog_pid" 2>/dev/null || { echo "bench-reconcile: the backlog's paysim ended:" >&2; tail -n 20 "$work/backlog-$k.err" >&2; exit 1; }
    sleep 0.2
  done
  sleep 2 # let serve's last jobs and the projector settle
  for run in A B; do
    seed=$((seed + 1))
    echo "bench-reconcile: pair $k run $run: --rate $rate_ingest --payments $ingest_payments --seed $seed" >&2
    if [ "$run" = B ]; then
      p0=$(now_ms)
      ledger reconcile --provider stripe --older-than 0s --json >"$work/pass-$k.json" 2>"$work/pass-$k.err" &
      pass_pid=$!
      sleep 1 # the pass's selection
    fi
    i0=$(now_ms)
    ingest "$seed" >"$work/$run-$k.json" 2>"$work/$run-$k.err" || status=1
    i1=$(now_ms)
    covered="–"
    if [ "$run" = B ]; then
      if kill -0 "$pass_pid" 2>/dev/null; then covered=yes; else covered=no; fi
      wait "$pass_pid" || status=1
      pass_pid=""
      p1=$(now_ms)
      covered="$covered ($(jq -r '.checked' "$work/pass-$k.json") checks in $(awk -v a="$p0" -v b="$p1" 'BEGIN { printf "%.1f", (b - a) / 1000 }') s)"
    fi
    rows+=("$(jq -r --arg run "$run#$k" --arg covered "$covered" --arg secs "$(awk -v a="$i0" -v b="$i1" 'BEGIN { printf "%.1f", (b - a) / 1000 }')" '
      "| \($run) | \(.offered_rate_per_s | floor) | \(.deliveries) | \(.throughput_per_s | floor) | \(.ack_latency_ms.p50) | \(.ack_latency_ms.p99) | \(.matched)/\(.wrong)/\(.missing) | \($secs) | \($covered) |"' \
      "$work/$run-$k.json")")
    jq -c --arg run "$run" '{run: $run, p50: .ack_latency_ms.p50, p99: .ack_latency_ms.p99}' "$work/$run-$k.json" >>"$work/acks.jsonl"
  done
  touch "$work/release"
  wait "$backlog_pid" || status=1
  backlog_pid=""
  rows+=("$(jq -r --arg k "$k" '"| backlog#\($k) | – | \(.deliveries) | – | \(.ack_latency_ms.p50) | \(.ack_latency_ms.p99) | \(.matched)/\(.wrong)/\(.missing) | – | – |"' "$work/backlog-$k.json")")
done

echo
echo "| run | offered /s | deliveries | throughput /s | ack p50 ms | ack p99 ms | matched/wrong/missing | run s | pass beside (running at the end?) |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
jq -rn '[inputs] | group_by(.run)[] | (map(.p99) | sort) as $p99 | (map(.p50) | sort) as $p50 |
  "\(.[0].run): ack p50 median \($p50[length / 2 | floor]) ms (\($p50 | min)–\($p50 | max)), p99 median \($p99[length / 2 | floor]) ms (\($p99 | min)–\($p99 | max))"' "$work/acks.jsonl"
[ $status -eq 0 ] || { echo "bench-reconcile: a run failed; last log lines:" >&2; tail -n 20 "$work/ledger.log" >&2; }
exit $status
