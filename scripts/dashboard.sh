#!/usr/bin/env bash
# Set up what the dashboard needs and serve it with gunicorn (DEBUG off unless DEBUG=1), the whitepaper
# data loaded, a benchmark worker and the reconciler.
# Embedded defaults (SQLite, a filesystem Celery broker under var/) unless DATABASE_URL / REDIS_URL are set.
# Usage: scripts/dashboard.sh [PORT]   (default 8000; BIND=0.0.0.0 to listen beyond this machine)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh dashboard
PORT=${1:-${PORT:-8000}}
export DEBUG=${DEBUG:-0}
PY=.venv/bin/python

$PY manage.py migrate --noinput -v0
$PY manage.py import_whitepapers
$PY manage.py seed_profiles 2>/dev/null || true
$PY manage.py ensure_admin
# With DEBUG off, static files are served by WhiteNoise from the collected, hashed copies.
$PY manage.py collectstatic --noinput -v0

cleanup() { kill ${WORKER_PIDS:-} 2>/dev/null || true; }
trap cleanup EXIT INT TERM
# One benchmark at a time on this client; a second small worker runs beat and the reconciler, so a
# long benchmark never delays it. (In production run them as a dedicated user: README, "Production".)
.venv/bin/celery -A config worker -Q benchmarks -c 1 -n bench@%h --loglevel=INFO >var/worker.log 2>&1 &
WORKER_PIDS="$!"
.venv/bin/celery -A config worker -B -Q celery -c 1 -n reconciler@%h --schedule var/celerybeat-schedule \
  --loglevel=INFO >var/reconciler.log 2>&1 &
WORKER_PIDS="$WORKER_PIDS $!"
echo "Celery workers started (logs: var/worker.log, var/reconciler.log)"
echo "Dashboard on http://127.0.0.1:$PORT/  (admin login: see above; DEBUG=$DEBUG)"
.venv/bin/gunicorn -c python:config.gunicorn_conf config.wsgi:application --bind "${BIND:-127.0.0.1}:$PORT" --workers "${WEB_WORKERS:-3}" \
  --timeout 60 --no-control-socket --access-logfile - --error-logfile -
