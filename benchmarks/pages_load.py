"""Requests/s of catalogue pages vs the same bytes as a static file, through the production server,
rendered from the page cache and rendered afresh.

    .venv/bin/python benchmarks/pages_load.py [--duration 5] [--rounds 3] [--connections 16] [--workers 2]
                                              [--database perfdash_bench] [--redis redis://127.0.0.1:6379/12]

Creates a throwaway PostgreSQL database, migrates it, imports the bundled whitepapers, collects static
files into a temporary STATIC_ROOT, and serves the project with gunicorn in production mode
(DJANGO_PRODUCTION=1, DEBUG off, SECURE_SSL_REDIRECT=0, a bench-only secret key, Redis cache). It fetches a
document page and the explorer once (as a browser asks: Accept-Encoding gzip), saves exactly those bytes
under STATIC_ROOT, restarts the same gunicorn command (WhiteNoise indexes static files at start) and measures
in that one server run, per page: the static twin, the page as the cache serves it (warmed first: a repeat
visitor), and the page rendered afresh (a new query string per request, `?fresh=<n>`, so neither the
process's page memory nor the shared cache has it: what a cold visitor or a crawler gets; each answer is
then stored in the cache too, as it is in production). Target: each page >= 0.95 of its static twin (cached).
Every external command is an argv list; nothing goes through a shell.
"""

import argparse
import base64
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
PG = "postgres://postgres@127.0.0.1:5432"
PAGES = {"document": "/documents/huawei-2025-10-21-mysql/", "explorer": "/explore/?engine=mysql&version=5.7"}


def run(argv, env):
    subprocess.run(argv, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)


def fresh_database(name):
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(name):
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def production_env(database, redis_url):
    """The production settings of a bench server: its own database, Redis and a temporary STATIC_ROOT."""
    return {
        **{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")},
        "DJANGO_PRODUCTION": "1", "SECURE_SSL_REDIRECT": "0", "SECURE_HSTS_SECONDS": "0",
        "SECRET_KEY": "bench-only-" + secrets.token_urlsafe(40),
        "FIELD_ENCRYPTION_KEY": base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        "ALLOWED_HOSTS": "127.0.0.1", "DATABASE_URL": f"{PG}/{database}",
        "REDIS_URL": redis_url, "STATIC_ROOT": tempfile.mkdtemp(prefix="perfdash-bench-static-"), "LOG_LEVEL": "WARNING",
    }


def prepare(env, database, redis_url):
    """A fresh database with the bundled whitepapers, static files collected, an empty cache."""
    fresh_database(database)
    run([PYTHON, "manage.py", "migrate", "--noinput"], env)
    run([PYTHON, "manage.py", "import_whitepapers"], env)
    run([PYTHON, "manage.py", "collectstatic", "--noinput"], env)
    run([PYTHON, "-c", f"import redis; redis.Redis.from_url({redis_url!r}).flushdb()"], env)


def cleanup(database, env):
    drop_database(database)
    shutil.rmtree(env["STATIC_ROOT"], ignore_errors=True)


def start_gunicorn(env, port, workers, stderr=None):
    proc = subprocess.Popen(
        [str(Path(PYTHON).parent / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--log-level", "warning"],
        cwd=ROOT, env=env, start_new_session=True, stderr=stderr)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            return proc
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit("gunicorn did not answer on /")


def stop(proc):
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def server_cpu_seconds(master_pid):
    """User + system CPU of the gunicorn master and its workers (robust to other load on the machine)."""
    pids = [master_pid] + [int(p) for p in Path(f"/proc/{master_pid}/task/{master_pid}/children").read_text().split()]
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


FRESH_QUERY = """-- a new query string for every request: the page is rendered afresh each time
counter = 0
request = function()
  counter = counter + 1
  local sep = string.find(wrk.path, "?", 1, true) and "&" or "?"
  return wrk.format(nil, wrk.path .. sep .. "fresh=" .. counter)
end
"""


def wrk(url, duration, connections, master_pid, script=None):
    cpu_before = server_cpu_seconds(master_pid)
    argv = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", "-H", "Accept-Encoding: gzip", url]
    if script:
        argv[1:1] = ["-s", script]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    cpu = server_cpu_seconds(master_pid) - cpu_before
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return rps, int(non2xx.group(1)) if non2xx else 0, cpu / requests * 1000


def fetch(url):
    """The bytes a browser gets (it asks for gzip) and their Content-Encoding."""
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})) as answer:
        return answer.read(), answer.headers.get("Content-Encoding", "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database", default="perfdash_bench")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    args = parser.parse_args()

    print("$ .venv/bin/python benchmarks/pages_load.py " + " ".join(sys.argv[1:]))
    env = production_env(args.database, args.redis)
    static_root = Path(env["STATIC_ROOT"])
    fresh_script = Path(tempfile.mkstemp(prefix="perfdash-bench-fresh-", suffix=".lua")[1])
    fresh_script.write_text(FRESH_QUERY)
    proc = None
    try:
        prepare(env, args.database, args.redis)

        # 1. The pages' exact bytes (as sent to a browser that accepts gzip), saved as static files.
        base = f"http://127.0.0.1:{args.port}"
        proc = start_gunicorn(env, args.port, args.workers)
        sizes = {}
        for name, path in PAGES.items():
            body, encoding = fetch(base + path)
            (static_root / "bench").mkdir(exist_ok=True)
            (static_root / "bench" / f"{name}.html").write_bytes(body)
            sizes[name] = f"{len(body)}{' gz' if encoding == 'gzip' else ''}"
        stop(proc)

        # 2. One server run: each page's static twin, cached page and page rendered afresh.
        proc = start_gunicorn(env, args.port, args.workers)
        for path in PAGES.values():
            fetch(base + path)  # warm the page cache, as any visitor would
        print(f"gunicorn --workers {args.workers}, DEBUG off, PostgreSQL {args.database}, Redis cache; "
              f"wrk -t2 -c{args.connections} -d{args.duration}s -H 'Accept-Encoding: gzip'; "
              f"{os.cpu_count()} CPUs shared by server and wrk")
        print(f"{args.rounds} rounds, static / cached / fresh in turn; medians. Load average before: "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} (other work on the machine makes req/s noisy; "
              "server CPU per request is not)")
        print(f"{'page':<10} {'bytes':>9} {'static':>8} {'cached':>8} {'ratio':>6} {'fresh':>8} {'ratio':>6}   "
              f"{'CPU ms/req static':>17} {'cached':>7} {'fresh':>7}")
        ratios = []
        for name, path in PAGES.items():
            got = {"static": [], "cached": [], "fresh": []}
            cpu = {"static": [], "cached": [], "fresh": []}
            for _ in range(args.rounds):
                for kind, url, script in (("static", f"{base}/static/bench/{name}.html", None), ("cached", base + path, None),
                                          ("fresh", base + path, str(fresh_script))):
                    rps, bad, ms = wrk(url, args.duration, args.connections, proc.pid, script)
                    assert bad == 0, f"non-2xx responses ({kind} {name})"
                    got[kind].append(rps)
                    cpu[kind].append(ms)
            med = {k: statistics.median(v) for k, v in got.items()}
            cpu_med = {k: statistics.median(v) for k, v in cpu.items()}
            ratios.append(med["cached"] / med["static"])
            print(f"{name:<10} {sizes[name]:>9} {med['static']:>8.1f} {med['cached']:>8.1f} {med['cached'] / med['static']:>6.2f} "
                  f"{med['fresh']:>8.1f} {med['fresh'] / med['static']:>6.2f}   "
                  f"{cpu_med['static']:>17.3f} {cpu_med['cached']:>7.3f} {cpu_med['fresh']:>7.3f}")
            print(f"{'':<10} rounds req/s static/cached/fresh: " + ", ".join(
                f"{a:.0f}/{b:.0f}/{c:.0f}" for a, b, c in zip(got["static"], got["cached"], got["fresh"])))
        print(f"lowest cached/static req/s ratio {min(ratios):.2f} (target >= 0.95): {'met' if min(ratios) >= 0.95 else 'NOT met'}")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if proc and proc.poll() is None:
            stop(proc)
        cleanup(args.database, env)
        fresh_script.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
