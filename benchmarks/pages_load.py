"""Requests/s of catalogue pages vs the same bytes as a static file, through the production server.

    .venv/bin/python benchmarks/pages_load.py [--duration 5] [--rounds 3] [--connections 16] [--workers 2]

Creates a throwaway PostgreSQL database (perfdash_bench), migrates it, imports the bundled
whitepapers, collects static files into a temporary STATIC_ROOT, and serves the project with gunicorn
in production mode (DJANGO_PRODUCTION=1, DEBUG off, SECURE_SSL_REDIRECT=0, a bench-only secret key,
Redis cache). It fetches a document page and the explorer once, saves exactly those bytes under
STATIC_ROOT, restarts the same gunicorn command (WhiteNoise indexes static files at start) and measures
all four URLs with wrk in that one server run. Target: each dynamic page >= 0.8 of its static twin.
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
DB_NAME = "perfdash_bench"
PG = "postgres://postgres@127.0.0.1:5432"
PAGES = {"document": "/documents/huawei-2025-10-21-mysql/", "explorer": "/explore/?engine=mysql&version=5.7"}


def run(argv, env):
    subprocess.run(argv, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)


def fresh_database():
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')


def drop_database():
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')


def start_gunicorn(env, port, workers):
    proc = subprocess.Popen(
        [str(Path(PYTHON).parent / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--log-level", "warning"],
        cwd=ROOT, env=env, start_new_session=True)
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


def wrk(url, duration, connections, master_pid):
    cpu_before = server_cpu_seconds(master_pid)
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", url],
                         check=True, capture_output=True, text=True).stdout
    cpu = server_cpu_seconds(master_pid) - cpu_before
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return rps, int(non2xx.group(1)) if non2xx else 0, cpu / requests * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    print("$ .venv/bin/python benchmarks/pages_load.py " + " ".join(sys.argv[1:]))
    static_root = Path(tempfile.mkdtemp(prefix="perfdash-bench-static-"))
    env = {
        **{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")},
        "DJANGO_PRODUCTION": "1", "SECURE_SSL_REDIRECT": "0", "SECURE_HSTS_SECONDS": "0",
        "SECRET_KEY": "bench-only-" + secrets.token_urlsafe(40),
        "FIELD_ENCRYPTION_KEY": base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        "ALLOWED_HOSTS": "127.0.0.1", "DATABASE_URL": f"{PG}/{DB_NAME}",
        "REDIS_URL": "redis://127.0.0.1:6379/12", "STATIC_ROOT": str(static_root), "LOG_LEVEL": "WARNING",
    }
    proc = None
    try:
        fresh_database()
        run([PYTHON, "manage.py", "migrate", "--noinput"], env)
        run([PYTHON, "manage.py", "import_whitepapers"], env)
        run([PYTHON, "manage.py", "collectstatic", "--noinput"], env)
        run([PYTHON, "-c", "import redis; redis.Redis.from_url('redis://127.0.0.1:6379/12').flushdb()"], env)

        # 1. The pages' exact bytes, saved as static files.
        base = f"http://127.0.0.1:{args.port}"
        proc = start_gunicorn(env, args.port, args.workers)
        sizes = {}
        for name, path in PAGES.items():
            body = urllib.request.urlopen(base + path).read()
            (static_root / "bench").mkdir(exist_ok=True)
            (static_root / "bench" / f"{name}.html").write_bytes(body)
            sizes[name] = len(body)
        stop(proc)

        # 2. One server run: each dynamic page and its static twin.
        proc = start_gunicorn(env, args.port, args.workers)
        for path in PAGES.values():
            urllib.request.urlopen(base + path).read()  # warm the page cache, as any visitor would
        print(f"gunicorn --workers {args.workers}, DEBUG off, PostgreSQL {DB_NAME}, Redis cache; "
              f"wrk -t2 -c{args.connections} -d{args.duration}s; {os.cpu_count()} CPUs shared by server and wrk")
        print(f"{args.rounds} rounds, static and dynamic alternating; medians. Load average before: "
              f"{os.getloadavg()[0]:.2f} (other work on the machine makes req/s noisy; server CPU per request is not)")
        print(f"{'page':<10} {'bytes':>7} {'static req/s':>13} {'dynamic req/s':>14} {'ratio':>6}   "
              f"{'CPU ms/req static':>17} {'dynamic':>8} {'ratio':>6}")
        ratios = []
        for name, path in PAGES.items():
            static, dynamic, static_cpu, dynamic_cpu = [], [], [], []
            for _ in range(args.rounds):
                s_rps, s_bad, s_cpu = wrk(f"{base}/static/bench/{name}.html", args.duration, args.connections, proc.pid)
                d_rps, d_bad, d_cpu = wrk(base + path, args.duration, args.connections, proc.pid)
                assert s_bad == d_bad == 0, "non-2xx responses"
                static.append(s_rps)
                dynamic.append(d_rps)
                static_cpu.append(s_cpu)
                dynamic_cpu.append(d_cpu)
            s_med, d_med = statistics.median(static), statistics.median(dynamic)
            sc_med, dc_med = statistics.median(static_cpu), statistics.median(dynamic_cpu)
            ratios.append(d_med / s_med)
            print(f"{name:<10} {sizes[name]:>7} {s_med:>13.1f} {d_med:>14.1f} {d_med / s_med:>6.2f}   "
                  f"{sc_med:>17.3f} {dc_med:>8.3f} {sc_med / dc_med:>6.2f}")
            print(f"{'':<10} rounds req/s static/dynamic: " + ", ".join(f"{a:.0f}/{b:.0f}" for a, b in zip(static, dynamic)))
        print(f"lowest req/s ratio {min(ratios):.2f} (target >= 0.80): {'met' if min(ratios) >= 0.8 else 'NOT met'}")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        if proc and proc.poll() is None:
            stop(proc)
        drop_database()
        shutil.rmtree(static_root, ignore_errors=True)


if __name__ == "__main__":
    main()
