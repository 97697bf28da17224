#!/usr/bin/env python
"""What does pgbench's per-transaction log cost the dashboard's rw.sql run on the TLS-only PostgreSQL? The real
dashboard with its run step's log on and off, beside pgbench by hand with and without the same log.

`TLS=1 benchmarks/runs_overhead.py` found the dashboard's rw.sql TPS about 0.9 of by hand against the TLS-only
PostgreSQL of testbed/tls_servers.py (fsync off: the machine's CPU, not the disk, bounds it), and the dashboard logged
every transaction there (-l, --sampling-rate=1). Each round here runs, in an order rotated round by round:

  H    pgbench by hand: runs_overhead.py's command (Alibaba's without -r: -M prepared -v -P 1 -f rw.sql ...)
  HL   the same with the dashboard's log: -l --log-prefix=latency-step1 --sampling-rate=RATE, in a temporary directory
  D    a dashboard run (POST /api/v1/runs/, a real Celery worker with -c 1, server sampling, the API polled once a
       second as the run page does), its run step logging as the driver's sampling rule says
       (or at RATE with DASH_RATE=1)
  D0   the same dashboard run with its run step's log off (nothing else changed)

so D / D0 is what the log costs the dashboard, HL / H what it costs by hand, D0 / H what the rest of the
dashboard costs. SIDES=probe runs H, D and DP instead: DP is D with its run step's server sampling off (the probe
connection never opened; the CPU readings stay), so D / DP is what server sampling costs. The worker is this script started with --worker: Celery's own worker, with the pgbench driver's
log_prefix (and, with DASH_RATE=1, sampling_rate) replaced by ones that read a flag file this script writes before
each dashboard run. For each ratio: the geometric mean over the rounds and its 95 % confidence interval.
pgbench's own CPU is read with /usr/bin/time around each run step (the worker's and by hand): per transaction.

Usage:  .venv/bin/python benchmarks/pgbench_log_in_dashboard.py [ROUNDS] [SECONDS] [CLIENTS] [SCALE]
        RATE=1 (default) the by-hand log's rate; DASH_RATE=1 makes D log at RATE too (else the driver's rule);
        SIDES=probe (see above).
Starts its own TLS servers (testbed/tls_servers.py); uses runs_overhead.py's database and Redis db 11.
"""

import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bootstrap  # noqa: E402  (the one Django set-up: benchmarks/bootstrap.py)

ROOT = bootstrap.ROOT
from benchmarks.stats import paired_ratio  # noqa: E402
os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdash_runs_bench")
os.environ["REDIS_URL"] = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/11")
FLAG = os.environ.setdefault("PERFDASH_LOG_FLAG", str(Path(tempfile.gettempdir()) / f"perfdash-log-flag-{os.getpid()}"))
RATE = float(os.environ.get("RATE", "1"))
SIDES = os.environ.get("SIDES", "log")  # 'probe': H, D and DP (server sampling off) instead of H, HL, D, D0
RATIOS = (("D", "D0", "what the log costs the dashboard"), ("HL", "H", "what the log costs by hand"),
          ("D0", "H", "what the rest of the dashboard costs"), ("D", "H", "the dashboard as it runs"),
          ("DP", "H", "the dashboard without server sampling"), ("D", "DP", "what server sampling costs"))


def worker_main():
    """The Celery worker, with the driver's log switched by the flag file ('off', or 'on')."""
    bootstrap.setup(own_database=False)
    from runs.drivers import pgbench

    rule, prefix = pgbench.sampling_rate, pgbench.log_prefix

    def flag():
        return Path(FLAG).read_text().strip() if Path(FLAG).exists() else "on"

    pgbench.log_prefix = lambda index: "" if flag() == "off" else prefix(index)
    from runs import execution, sampling

    open_probe = execution.Execution.open_probe

    def probe_or_not(self):  # 'noprobe': the run step's server sampling off (its CPU readings stay)
        if flag() == "noprobe":
            raise sampling.ProbeFailed("switched off by benchmarks/pgbench_log_in_dashboard.py")
        return open_probe(self)

    execution.Execution.open_probe = probe_or_not
    if os.environ.get("DASH_RATE") == "1":
        pgbench.sampling_rate = lambda *args, **kwargs: RATE
    else:
        pgbench.sampling_rate = rule
    from celery.__main__ import main as celery

    sys.argv = ["celery", *sys.argv[2:]]
    sys.exit(celery())


if len(sys.argv) > 1 and sys.argv[1] == "--worker":
    worker_main()

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
SECONDS = int(sys.argv[2]) if len(sys.argv) > 2 else 8
CLIENTS = int(sys.argv[3]) if len(sys.argv) > 3 else 2
SCALE = int(sys.argv[4]) if len(sys.argv) > 4 else 1
RANGE = 100_000
SCRIPT = ROOT / "runs" / "drivers" / "scripts" / "rw.sql"
TIMES = Path(tempfile.mkdtemp(prefix="perfdash-log-times-"))
# pgbench's own CPU and context switches for each run step, whoever starts it (by hand or the worker's runner):
# the PATH seen by both leads to this wrapper first.
WRAPPER = """#!/bin/sh
case " $* " in *" -T "*) exec /usr/bin/time -a -o {times} -f "%U %S %c %w" {pgbench} "$@";; esac
exec {pgbench} "$@"
"""
def last_time():
    """pgbench's user + system CPU (s) and context switches of the run step that ended last."""
    user, system, involuntary, voluntary = open(TIMES / "times.txt").read().split("\n")[-2].split()
    return float(user) + float(system), int(involuntary) + int(voluntary)


def main():
    bootstrap.ensure_database()
    bindir = TIMES / "bin"
    bindir.mkdir()
    (bindir / "pgbench").write_text(WRAPPER.format(times=TIMES / "times.txt", pgbench=shutil.which("pgbench")))
    (bindir / "pgbench").chmod(0o755)
    os.environ["PATH"] = f"{bindir}:{os.environ['PATH']}"

    bootstrap.setup(own_database=False)
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from rest_framework.test import APIClient

    from runs.models import Run, Target
    from testbed import tls_servers

    call_command("migrate", verbosity=0)
    call_command("seed_profiles", stdout=open(os.devnull, "w"))
    servers = tls_servers.TLSServers(Path(tempfile.mkdtemp(prefix="perfdash-tls-log-"))).start()
    atexit.register(servers.stop)
    certs = servers.root / "certs"
    target, _ = Target.objects.update_or_create(name="bench-postgresql-tls", defaults=dict(
        engine="postgresql", host="localhost", port=servers.pg_port, database=tls_servers.DATABASE, user=tls_servers.USER,
        tls_mode="verify-full", tls_ca=servers.ca_pem, tls_cert=servers.client_cert_pem))
    target.set_password(tls_servers.PASSWORD)
    target.set_tls_key(servers.client_key_pem)
    target.save()
    user, _ = User.objects.get_or_create(username="bench-operator", defaults={"is_staff": True})
    api = APIClient()
    api.force_authenticate(user)

    env = {**os.environ, "PGPASSWORD": tls_servers.PASSWORD, "PGSSLMODE": "verify-full",
           "PGSSLROOTCERT": str(certs / "perfdash-test-ca.crt")}
    conn = ["-h", "localhost", "-p", str(servers.pg_port), "-U", tls_servers.USER, tls_servers.DATABASE]

    def by_hand(log):
        """runs_overhead.py's by-hand command (pgbench 15 manual: pgbench [OPTION]... [DBNAME]), with the log or not."""
        subprocess.run(["pgbench", "-i", "-q", "-s", str(SCALE), *conn], check=True, capture_output=True, env=env)
        extra = ["-l", "--log-prefix=latency-step1", f"--sampling-rate={RATE:g}"] if log else []
        with tempfile.TemporaryDirectory() as workdir:
            out = subprocess.run(["pgbench", "-M", "prepared", "-v", "-P", "1", "-c", str(CLIENTS), "-j", str(CLIENTS),
                                  "-T", str(SECONDS), "-f", str(SCRIPT), "-D", f"scale={SCALE}", "-D", f"range={RANGE}", *extra, *conn],
                                 check=True, capture_output=True, text=True, env=env, cwd=workdir).stdout
        tps = float(next(ln for ln in out.splitlines() if ln.startswith("tps = ")).split()[2])
        done = int(next(ln for ln in out.splitlines() if ln.startswith("number of transactions actually")).split(":")[1])
        return tps, done, f"rate {RATE:g}" if log else "no log"

    worker = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", "-A", "config", "worker", "-Q",
                               "celery,benchmarks", "-c", "1", "-n", "bench@%h", "--without-gossip", "--without-mingle", "-l", "WARNING"],
                              cwd=ROOT, env={**os.environ, "CONN_MAX_AGE": "0"}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(4)

    def dashboard(log, probe=True):
        Path(FLAG).write_text(("on" if probe else "noprobe") if log else "off")
        response = api.post("/api/v1/runs/", {"target": target.pk, "profile": "pgbench-rw-quick", "overrides": {
            "threads": CLIENTS, "duration_s": SECONDS, "scale": SCALE, "range": RANGE}}, format="json")
        assert response.status_code == 201, response.content
        run_id = response.json()["id"]
        while api.get(f"/api/v1/runs/{run_id}/").json()["state"] not in ("succeeded", "failed", "cancelled"):
            time.sleep(1.0)  # as the run page polls
        run = Run.objects.get(pk=run_id)
        assert run.state == "succeeded", run.reason
        step = run.insight["steps"][0]
        assert (run.server_samples.exists() and bool(step["server"].get("tps"))) == probe, "server sampling on or off as asked"
        assert ("-l" in run.command_line.split()) == log, run.command_line
        return run.summary["tps"], run.summary["transactions"], (step.get("latency") or {}).get("method") or "no log"

    sides = {"H": lambda: by_hand(False), "HL": lambda: by_hand(True), "D": lambda: dashboard(True), "D0": lambda: dashboard(False),
             "DP": lambda: dashboard(True, probe=False)}
    sides = {k: sides[k] for k in (("H", "D", "DP") if SIDES == "probe" else ("H", "HL", "D", "D0"))}
    got = {k: [] for k in sides}
    cpu = {k: [] for k in sides}
    how = {}
    print(f"$ .venv/bin/python {' '.join(sys.argv)}   (RATE={RATE:g}{', DASH_RATE=1' if os.environ.get('DASH_RATE') == '1' else ''})", flush=True)
    try:
        dashboard(True)  # not counted: warms the worker up
        for i in range(ROUNDS):
            names = list(sides)
            order = names[i % len(names):] + names[:i % len(names)]
            for side in order:
                tps, done, how[side] = sides[side]()
                seconds, switches = last_time()
                got[side].append(tps)
                cpu[side].append(1e6 * seconds / done)
            print(f"round {i + 1:2d} ({' '.join(order)}): " + "  ".join(f"{k} {got[k][-1]:8.1f}" for k in sides) +
                  "   " + "  ".join(f"{a}/{b} {got[a][-1] / got[b][-1]:.3f}" for a, b, _ in RATIOS if a in got and b in got) +
                  "   pgbench CPU/tx " + " ".join(f"{k} {cpu[k][-1]:.1f}" for k in sides) +
                  f" us   load {open('/proc/loadavg').read().split()[0]}", flush=True)
    finally:
        os.killpg(worker.pid, 15)
        worker.wait()
        servers.stop()
        Path(FLAG).unlink(missing_ok=True)
        shutil.rmtree(TIMES, ignore_errors=True)
    print()
    print(f"rw.sql on the TLS-only PostgreSQL (verify-full), {CLIENTS} clients, scale {SCALE}, {SECONDS} s, {ROUNDS} rounds, "
          f"order rotated; logs: " + ", ".join(f"{k} {v}" for k, v in how.items()) +
          f"; machine: {os.cpu_count()} cores (load average at the end: {' '.join(open('/proc/loadavg').read().split()[:3])})")
    for a, b, meaning in [r for r in RATIOS if r[0] in got and r[1] in got]:
        g, low, high = paired_ratio(got[b], got[a])
        diffs = [x - y for x, y in zip(cpu[a], cpu[b])]
        print(f"{a:2s}/{b:2s} TPS: geometric mean {g:.3f} (95 % CI {low:.3f}-{high:.3f}); pgbench CPU per transaction "
              f"{statistics.median(cpu[a]):.1f} against {statistics.median(cpu[b]):.1f} us (mean difference "
              f"{statistics.fmean(diffs):+.1f} us): {meaning}")


if __name__ == "__main__":
    main()
