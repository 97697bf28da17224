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

cleanup() { [ -n "${WORKER_PID:-}" ] && kill "$WORKER_PID" 2>/dev/null || true; }
trap cleanup EXIT INT TERM
.venv/bin/celery -A config worker -Q celery,benchmarks -c 1 --loglevel=INFO >var/worker.log 2>&1 &
WORKER_PID=$!
echo "Celery worker started (log: var/worker.log)"
echo "Dashboard on http://127.0.0.1:$PORT/  (admin login: see above)"
$PY manage.py runserver "127.0.0.1:$PORT"
