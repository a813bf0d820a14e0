#!/usr/bin/env bash
# Usage: scripts/fuzz.sh [fuzztime] [packages...]
# Runs every fuzz target in the packages (default ./...) for fuzztime each (30s),
# beyond its committed seed corpus (which runs on every `go test`), and fails
# if any target finds an input. `go test -fuzz` takes one package and one
# target per call, hence the loop. fuzztime includes the pass over the corpus
# (well under a second per target on an idle machine). FUZZPARALLEL sets the
# workers per target (default: GOMAXPROCS).
# A finding is written to <pkg>/testdata/fuzz/<Target>/ and printed here, so
# a CI log is enough to reproduce it; commit it as a seed with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-30s}
pkgs=("${@:2}")
if [ "${#pkgs[@]}" -eq 0 ]; then pkgs=(./...); fi
parallel=()
if [ -n "${FUZZPARALLEL:-}" ]; then parallel=(-parallel "$FUZZPARALLEL"); fi

# fuzz_one runs one target, retrying once when Go's coordinator reports its
# own deadline race (golang/go#75804, fixed in Go 1.27): at the -fuzztime
# boundary a starved worker surfaces "context deadline exceeded" with no input
# written. A real finding always writes testdata/fuzz/<Target>/<file> and
# prints "Failing input written to", so that, and any other failure, is never
# retried.
fuzz_one() {
  local pkg=$1 dir=$2 target=$3 log attempt
  log=$(mktemp)
  for attempt in 1 2; do
    if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "${parallel[@]}" "$pkg" 2>&1 | tee "$log"; then
      rm -f "$log"
      return 0
    fi
    if [ "$attempt" -eq 1 ] && grep -q 'context deadline exceeded' "$log" &&
      ! grep -qE 'Failing input written to|panic:|\.go:[0-9]+:' "$log" &&
      [ -z "$(git ls-files --others --exclude-standard -- "$dir/testdata/fuzz/$target" 2>/dev/null)" ]; then
      echo "-- $target: the fuzz coordinator's deadline race (golang/go#75804), no input written; running it once more"
      continue
    fi
    break
  done
  rm -f "$log"
  return 1
}

targets=0
failed=()
while read -r pkg dir; do
  for target in $(grep -hoE '^func Fuzz[A-Za-z0-9_]+' "$dir"/*_test.go 2>/dev/null | awk '{print $2}'); do
    targets=$((targets + 1))
    echo "== $pkg $target ($fuzztime)"
    if ! fuzz_one "$pkg" "$dir" "$target"; then
      failed+=("$pkg $target")
      for f in $(git ls-files --others --exclude-standard -- "$dir/testdata/fuzz/$target" 2>/dev/null); do
        echo "-- new input $f:"
        cat "$f"
      done
    fi
  done
done < <(go list -f '{{.ImportPath}} {{.Dir}}' "${pkgs[@]}")

if [ "$targets" -eq 0 ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'fuzz: %d of %d targets failed:\n' "${#failed[@]}" "$targets" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz: $targets targets clean, $fuzztime each"
