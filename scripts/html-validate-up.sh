#!/usr/bin/env bash
# Installs the HTML validator the console's browser tests run (html-validate,
# pinned by api/console/testdata/htmlvalidate/package-lock.json) when it is
# not installed yet. Called by `make test`.
set -euo pipefail
cd "$(dirname "$0")/../api/console/testdata/htmlvalidate"
if [ ! -x node_modules/.bin/html-validate ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
