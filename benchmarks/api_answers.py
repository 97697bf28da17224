"""Requests/s of anonymous API answers vs a static file of the same size, on the embedded default (issue 52.14).

    .venv/bin/python benchmarks/api_answers.py [--duration 5] [--rounds 3] [--connections 20] [--workers 3]

The embedded default as `scripts/dashboard.sh` runs it with no configuration: SQLite under a temporary directory,
no REDIS_URL (local-memory cache, the rate limit counted in its SQLite file beside the database,
config/rate_counter.py), gunicorn with DEBUG off (DJANGO_PRODUCTION=1, a bench-only key), the anonymous rate limit
on but raised for the measurement (every request counted; --anon-rate '' turns it off). It migrates, imports the
bundled whitepapers, saves the first results page's bytes as a static file (WhiteNoise serves it), restarts
gunicorn and measures with wrk, per answer: req/s, p50, server CPU per request, and the ratio to the static file of
the same round (rounds interleaved: the machine is shared, its other work comes and goes; medians over rounds).
Target: each cached answer >= 0.5 of the static file. Each answer is fetched a few times first (the cache warm in
every worker, as after any visitors). Then the limit itself: under API_ANON_RATE=300/minute, wrk's requests must get
exactly 300 answers 200, whichever of the workers answers (--limit-check).
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


def limit_check(env, args):
    """The rate limit as deployed, one count for every worker: with API_ANON_RATE=<n>/minute, wrk's requests from
    one address get exactly n answers 200 and 429 for the rest, whichever worker answers (each answer after the
    first one per worker and answer comes from AnswerMiddleware's memory)."""
    limit = args.limit_check
    proc = start_gunicorn({**env, "API_ANON_RATE": f"{limit}/minute"}, args.port, args.workers,
                          stderr=subprocess.DEVNULL)  # Django logs each 429 as a warning
    try:
        url = f"http://127.0.0.1:{args.port}{ANSWERS['results page']}"
        out = subprocess.run(["wrk", "-t2", f"-c{args.connections}", f"-d{args.duration}s", url],
                             check=True, capture_output=True, text=True).stdout
        total = int(re.search(r"(\d+) requests in", out).group(1))
        refused = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
        answered = total - (int(refused.group(1)) if refused else 0)
        print(f"rate limit check: API_ANON_RATE={limit}/minute, {args.workers} workers, wrk {total} requests in "
              f"{args.duration} s from one address: {answered} answered 200, {total - answered} refused (429)"
              f" -> {'exactly the limit' if answered == limit else 'NOT the limit'}")
    finally:
        stop(proc)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--port", type=int, default=8767)
    parser.add_argument("--limit-check", type=int, default=300,
                        help="then count the 200s under API_ANON_RATE=<n>/minute (0: skip)")
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
        # Rounds interleaved (each round measures every row, the static file first): the machine's other work comes
        # and goes, so each answer's ratio is taken to the static file of its own round, then the median.
        results = {name: [] for name in rows}
        for _ in range(args.rounds):
            for name, url in rows.items():
                results[name].append(wrk(url, args.duration, args.connections, proc.pid))
        for name, measured in results.items():
            assert all(bad == 0 for _, bad, _, _ in measured), f"non-2xx responses ({name})"
            ratio = statistics.median(r[0] / s[0] for r, s in zip(measured, results["static file"]))
            print(f"{name:<14} {statistics.median(r[0] for r in measured):>8.1f} {ratio:>6.2f} "
                  f"{statistics.median(r[2] for r in measured):>7.2f} {statistics.median(r[3] for r in measured):>10.2f}")
        stop(proc)
        proc = None
        if args.limit_check:
            limit_check(env, args)
    finally:
        if proc is not None:
            stop(proc)
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(static_root, ignore_errors=True)


if __name__ == "__main__":
    main()
