#!/usr/bin/env bash
# Set up everything and run the test suite against the machine's real services (PostgreSQL, Redis, MariaDB,
# sysbench, pgbench, headless Chromium). Extra args go to pytest. Tiers (docs/development.md):
#   scripts/test.sh              the whole suite (CI: .ci/run)
#   scripts/test.sh --quick      under 2 minutes: each test function that is not slow once (its first parameter
#                                set), and those marked quick (one real sysbench run, one real pgbench run, one
#                                browser page)
#   scripts/test.sh --changed    the tests that load a file changed since main (git diff main..., the working
#                                tree), with the tiers the change needs (tests/tiers.py)
set -euo pipefail
cd "$(dirname "$0")/.."
tier=()
case "${1:-}" in
  --quick) shift; tier=(-m "not slow or quick" --one-case) ;;
  --changed) shift; tier=(--changed) ;;
esac
scripts/setup.sh
status=0
.venv/bin/pytest ${tier[@]+"${tier[@]}"} "$@" || status=$?
if [ "$status" = 5 ] && [ "${tier[0]:-}" = --changed ]; then
  status=0  # nothing the change needs: no test to run
fi
exit "$status"
