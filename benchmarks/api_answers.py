"""Requests/s of anonymous API answers vs a static file of the same size, on the embedded default (issue 52.14).

    .venv/bin/python benchmarks/api_answers.py [--duration 5] [--rounds 1] [--connections 20] [--workers 3]

The embedded default as `scripts/dashboard.sh` runs it with no configuration: SQLite under a temporary directory,
no REDIS_URL (local-memory cache, the rate limit counted in the database's cache table), gunicorn with DEBUG off
(DJANGO_PRODUCTION=1, a bench-only key), the anonymous rate limit raised for the measurement. It migrates, imports
the bundled whitepapers, saves the first results page's bytes as a static file (WhiteNoise serves it), restarts
gunicorn and measures with wrk, per answer: req/s, p50, and the ratio to the static file. Target: each cached
answer >= 0.5 of the static file. Each answer is fetched once first (the cache warm, as after any visitor).
Helpers (gunicorn, wrk, server CPU) are benchmarks/pages_load.py's. Every command is an argv list, no shell.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pages_load import PYTHON, production_env, run, server_cpu_seconds, start_gunicorn, stop

ANSWERS = {
    "results page": "/api/v1/results/",
    "filtered list": "/api/v1/results/?engine=mysql&version=8.0&ordering=-tps",
    "spec lookup": "/api/v1/spec/?engine=mysql&version=8.0&family=dedicated&vcpus=8&memory_gb=64",
    "results CSV": "/api/v1/results/csv/",
    "Parquet": "/api/v1/results/parquet/?engine=mysql",
}


def wrk(url, duration, connections, master_pid):
    cpu_before = server_cpu_seconds(master_pid)
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", url],
                         check=True, capture_output=True, text=True).stdout
    cpu = server_cpu_seconds(master_pid) - cpu_before
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)", out)
    p50_ms = float(p50.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p50.group(2)]
    return (float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), int(non2xx.group(1)) if non2xx else 0,
            p50_ms, cpu / requests * 1000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--port", type=int, default=8767)
    parser.add_argument("--anon-rate", default="10000000/minute",
                        help="API_ANON_RATE for the run; '' turns the rate limit off (to see what counting costs)")
    args = parser.parse_args()
    print("$ .venv/bin/python benchmarks/api_answers.py " + " ".join(sys.argv[1:]))

    work = Path(tempfile.mkdtemp(prefix="perfdash-bench-api-"))
    env = production_env("unused", "")
    env.pop("REDIS_URL")
    env.update(DATABASE_URL=f"sqlite:///{work / 'db.sqlite3'}", API_ANON_RATE=args.anon_rate)
    static_root = Path(env["STATIC_ROOT"])
    proc = None
    try:
        for command in (["migrate", "--noinput", "-v0"], ["import_whitepapers"], ["collectstatic", "--noinput", "-v0"]):
            run([PYTHON, "manage.py", *command], env)
        base = f"http://127.0.0.1:{args.port}"
        proc = start_gunicorn(env, args.port, args.workers)
        import urllib.request

        body = urllib.request.urlopen(base + ANSWERS["results page"]).read()
        (static_root / "bench").mkdir(exist_ok=True)
        (static_root / "bench" / "results.json").write_bytes(body)
        stop(proc)
        proc = start_gunicorn(env, args.port, args.workers)  # WhiteNoise indexes static files at start
        for path in ANSWERS.values():
            for _ in range(args.workers * 2):  # warm: each worker's process memory, the shared cache
                urllib.request.urlopen(base + path).read()
        print(f"embedded default: SQLite, no Redis; gunicorn --workers {args.workers}, DEBUG off; wrk -t2 "
              f"-c{args.connections} -d{args.duration}s; {os.cpu_count()} CPUs shared by server, wrk and other work "
              f"(load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
        print(f"static file: {len(body)} bytes (the results page's JSON); {args.rounds} round(s), medians")
        print(f"{'answer':<14} {'req/s':>8} {'ratio':>6} {'p50 ms':>7} {'CPU ms/req':>10}")
        rows = {"static file": f"{base}/static/bench/results.json",
                **{name: base + path for name, path in ANSWERS.items()}}
        static = None
        for name, url in rows.items():
            results = [wrk(url, args.duration, args.connections, proc.pid) for _ in range(args.rounds)]
            assert all(bad == 0 for _, bad, _, _ in results), f"non-2xx responses ({name})"
            rps = statistics.median(r[0] for r in results)
            static = static or rps
            print(f"{name:<14} {rps:>8.1f} {rps / static:>6.2f} {statistics.median(r[2] for r in results):>7.2f} "
                  f"{statistics.median(r[3] for r in results):>10.2f}")
    finally:
        if proc is not None:
            stop(proc)
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(static_root, ignore_errors=True)


if __name__ == "__main__":
    main()
