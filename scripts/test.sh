#!/usr/bin/env bash
# Set up everything and run the whole test suite against the machine's real services
# (PostgreSQL, Redis, MariaDB, sysbench, pgbench, headless Chromium). Extra args go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/pytest "$@"
