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

targets=0
failed=()
while read -r pkg dir; do
  for target in $(grep -hoE '^func Fuzz[A-Za-z0-9_]+' "$dir"/*_test.go 2>/dev/null | awk '{print $2}'); do
    targets=$((targets + 1))
    echo "== $pkg $target ($fuzztime)"
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "${parallel[@]}" "$pkg"; then
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
