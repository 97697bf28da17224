#!/usr/bin/env bash
# Set up everything and run the dashboard with the whitepaper data loaded and a Celery worker.
# Embedded defaults (SQLite, filesystem broker) unless DATABASE_URL / REDIS_URL are set.
# Usage: scripts/dashboard.sh [PORT]   (default 8000)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
PORT=${1:-${PORT:-8000}}
PY=.venv/bin/python

$PY manage.py migrate --noinput -v0
$PY manage.py import_whitepapers
$PY manage.py seed_profiles 2>/dev/null || true
$PY manage.py ensure_admin

cleanup() { kill ${WORKER_PIDS:-} 2>/dev/null || true; }
trap cleanup EXIT INT TERM
# One benchmark at a time on this client; a second small worker runs beat and the reconciler, so a
# long benchmark never delays it.
.venv/bin/celery -A config worker -Q benchmarks -c 1 -n bench@%h --loglevel=INFO >var/worker.log 2>&1 &
WORKER_PIDS="$!"
.venv/bin/celery -A config worker -B -Q celery -c 1 -n reconciler@%h --schedule var/celerybeat-schedule \
  --loglevel=INFO >var/reconciler.log 2>&1 &
WORKER_PIDS="$WORKER_PIDS $!"
echo "Celery workers started (logs: var/worker.log, var/reconciler.log)"
echo "Dashboard on http://127.0.0.1:$PORT/  (admin login: see above)"
$PY manage.py runserver "127.0.0.1:$PORT"
