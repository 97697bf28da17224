#!/usr/bin/env bash
# Idempotent set-up for a fresh machine (Debian, root): system packages, local services,
# Python venv, front-end packages, database schema and the whitepaper data.
# A second run only checks what is already there.
# Usage: scripts/setup.sh [test|dashboard]   (default test: everything the test suite needs;
#        dashboard: only what serving the dashboard and running benchmarks needs)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MODE=${1:-test}
mkdir -p var/celery-broker var/celery-processed var/celery-control var/staticfiles

log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

# --- system packages: benchmark tools, browser for tests, load tool for benchmarks ---------------
need_apt=()
command -v sysbench >/dev/null || need_apt+=(sysbench)
command -v pgbench >/dev/null || need_apt+=(postgresql-client)
command -v npm >/dev/null || need_apt+=(npm)
command -v msgfmt >/dev/null || need_apt+=(gettext)  # compiles the Chinese catalogue (locale/)
if [ "$MODE" = test ]; then  # browser tests, screenshots and the load benchmark
  command -v chromium >/dev/null || need_apt+=(chromium)
  command -v chromedriver >/dev/null || need_apt+=(chromium-driver)
  command -v wrk >/dev/null || need_apt+=(wrk)
  [ -d /usr/share/fonts/truetype/wqy ] || need_apt+=(fonts-wqy-zenhei)  # CJK glyphs for browser tests and screenshots
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  log "installing ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# --- local services (start the ones that are installed and not answering) -----------------------
if command -v pg_lsclusters >/dev/null && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  log "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
fi
if command -v redis-server >/dev/null && ! redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then
  log "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi
if command -v mariadbd >/dev/null && ! mariadb -uroot -h 127.0.0.1 -e 'select 1' >/dev/null 2>&1; then
  log "starting MariaDB"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
fi
for _ in $(seq 1 30); do
  ok=1
  command -v pg_isready >/dev/null && { pg_isready -q -h 127.0.0.1 -p 5432 || ok=0; }
  command -v mariadb >/dev/null && { mariadb -uroot -h 127.0.0.1 -e 'select 1' >/dev/null 2>&1 || ok=0; }
  [ $ok = 1 ] && break
  sleep 1
done

# --- Python (3.12+, for Django 6) ---------------------------------------------------------------
find_python() {
  for candidate in python3.12 /root/.pyenv/versions/3.12*/bin/python3 python3.13 /root/.pyenv/versions/3.13*/bin/python3 python3; do
    if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
      command -v "$candidate" || echo "$candidate"; return 0
    fi
  done
  echo "Python 3.12 or newer is required (Django 6)" >&2; return 1
}
if [ ! -x .venv/bin/python ]; then
  PY=$(find_python)
  log "creating .venv with $PY"
  "$PY" -m venv .venv
fi
# The dashboard needs requirements.txt; the tests requirements-dev.txt (which includes it).
if [ "$MODE" = test ]; then reqs=requirements-dev.txt; else reqs=requirements.txt; fi
stamp=var/.requirements-$MODE.sha
want=$(cat requirements.txt "$reqs" requirements-nodeps.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing Python packages ($reqs)"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r "$reqs"
  # django-celery-beat declares Django<6.1 but runs on it: installed without its resolver, its
  # dependencies pinned in requirements.txt.
  .venv/bin/pip install -q --no-deps -r requirements-nodeps.txt
  echo "$want" > "$stamp"
fi

# --- front-end packages (htmx, Chart.js) from npm, pinned in package.json -----------------------
fstamp=var/.package.sha
fwant=$(cat package.json package-lock.json 2>/dev/null | sha256sum | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat "$fstamp" 2>/dev/null)" != "$fwant" ]; then
  log "installing front-end packages"
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; else npm install --no-audit --no-fund --loglevel=error; fi
  echo "$fwant" > "$fstamp"
fi

# --- the Chinese catalogue: compiled from locale/zh_Hans/*.po (the .mo is committed too; this keeps it current)
scripts/messages.sh compile >/dev/null

log "ready ($ROOT)"
