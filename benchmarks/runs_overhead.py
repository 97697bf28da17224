#!/usr/bin/env python
"""Is a run through the dashboard as trustworthy as sysbench by hand?

The same small sysbench oltp_read_write workload against the machine's MariaDB, alternating
"by hand" (sysbench started directly with the same arguments) and "through the dashboard" (POST
/api/v1/runs/, a real Celery worker with -c 1, Redis), ROUNDS times each. Reports the TPS of each,
the ratio of the medians (target >= 0.97), and how long after the worker read an interval line from
sysbench's stdout the sample was visible through GET /api/v1/runs/{id}/samples/?after= (polled
every 20 ms through the API view stack, in process). The line is read from a pipe as sysbench
prints it, so "read by the worker" is "printed" to within the pipe's latency.

Usage:  .venv/bin/python benchmarks/runs_overhead.py [ROUNDS] [SECONDS] [THREADS]
Uses its own database perfdash_runs_bench (PostgreSQL) and Redis db 13.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdash_runs_bench")
os.environ["REDIS_URL"] = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
SECONDS = int(sys.argv[2]) if len(sys.argv) > 2 else 8
THREADS = int(sys.argv[3]) if len(sys.argv) > 3 else 2
TABLES, ROWS = 1, 10000


def ensure_database():
    import psycopg

    name = os.environ["DATABASE_URL"].rsplit("/", 1)[1]
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as pg:
        if not pg.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            pg.execute(f"CREATE DATABASE {name}")


def main():
    ensure_database()
    import django

    django.setup()
    from django.core.management import call_command

    from runs.drivers import Connection, sysbench
    from tests.runs_support import DB_USER, MYSQL_DB, PASSWORD, ensure_database_users

    call_command("migrate", verbosity=0)
    call_command("seed_profiles", stdout=open(os.devnull, "w"))
    ensure_database_users()

    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    from runs.models import Run, Target

    user, _ = User.objects.get_or_create(username="bench-operator", defaults={"is_staff": True})
    target, _ = Target.objects.get_or_create(name="bench-mariadb", defaults=dict(
        engine="mysql", host="127.0.0.1", port=3306, database=MYSQL_DB, user=DB_USER))
    target.set_password(PASSWORD)
    target.save()
    api = APIClient()
    api.force_authenticate(user)
    params = {"tables": TABLES, "rows_per_table": ROWS, "report_interval_s": 1, "prepared": True, "workload": "oltp_read_write"}
    conn = Connection("mysql", "127.0.0.1", 3306, MYSQL_DB, DB_USER)

    env = {**os.environ, "CONN_MAX_AGE": "0"}
    worker = subprocess.Popen([str(Path(sys.executable).parent / "celery"), "-A", "config", "worker", "-Q", "celery,benchmarks",
                               "-c", "1", "-n", "bench@%h", "--without-gossip", "--without-mingle", "-l", "WARNING"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(4)

    def by_hand():
        with tempfile.TemporaryDirectory() as workdir:
            cfg = Path(workdir) / "sysbench.cfg"
            cfg.write_text(sysbench.secret_files(conn, PASSWORD)["sysbench.cfg"])
            cfg.chmod(0o600)
            subprocess.run(sysbench.build_argv("prepare", conn, params, workdir), check=True, capture_output=True)
            out = subprocess.run(sysbench.build_argv("run", conn, params, workdir, THREADS, SECONDS), check=True,
                                 capture_output=True, text=True).stdout
            subprocess.run(sysbench.build_argv("cleanup", conn, params, workdir), check=True, capture_output=True)
        return sysbench.parse_summary(out)["tps"]

    def dashboard():
        response = api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick", "overrides": {
            "threads": THREADS, "duration_s": SECONDS, "tables": TABLES, "rows_per_table": ROWS}}, format="json")
        assert response.status_code == 201, response.content
        run_id, after, seen = response.json()["id"], 0, {}
        while True:
            body = api.get(f"/api/v1/runs/{run_id}/samples/?after={after}").json()
            now = time.time()
            for sample in body["results"]:
                seen[sample["id"]] = now
                after = sample["id"]
            if body["state"] in ("succeeded", "failed", "cancelled") and not body["results"]:
                break
            time.sleep(0.02)
        run = Run.objects.get(pk=run_id)
        assert run.state == "succeeded", run.reason
        delays = [seen[s.id] - s.received_at.timestamp() for s in run.samples.all()]
        return run.summary["tps"], delays

    rows, hand, dash, delays = [], [], [], []
    try:
        for i in range(ROUNDS):
            h = by_hand()
            d, lat = dashboard()
            hand.append(h)
            dash.append(d)
            delays += lat
            rows.append(f"round {i + 1}: by hand {h:9.2f} TPS   dashboard {d:9.2f} TPS   ratio {d / h:.3f}")
            print(rows[-1], flush=True)
    finally:
        os.killpg(worker.pid, 15)
        worker.wait()
    ratio = statistics.median(dash) / statistics.median(hand)
    delays_ms = sorted(1000 * x for x in delays)
    print()
    print(f"workload: sysbench {sysbench.parse_version(subprocess.run(['sysbench', '--version'], capture_output=True, text=True).stdout)} "
          f"oltp_read_write, MariaDB, {TABLES} table x {ROWS} rows, {THREADS} threads, {SECONDS} s, report every 1 s; "
          f"{ROUNDS} rounds alternating; machine: {os.cpu_count()} cores, shared")
    print(f"median TPS by hand {statistics.median(hand):.2f}, through the dashboard {statistics.median(dash):.2f}")
    print(f"TPS ratio dashboard/by hand (medians): {ratio:.3f}  (target >= 0.97: {'met' if ratio >= 0.97 else 'NOT met'})")
    print(f"mean of per-round ratios: {statistics.mean(d / h for d, h in zip(dash, hand)):.3f}")
    print(f"sample visible through the API after the worker read the line: n={len(delays_ms)}, "
          f"median {statistics.median(delays_ms):.0f} ms, p95 {delays_ms[int(0.95 * (len(delays_ms) - 1))]:.0f} ms, "
          f"max {delays_ms[-1]:.0f} ms (API polled every 20 ms; the run page polls every 1 s on top of this)")


if __name__ == "__main__":
    main()
