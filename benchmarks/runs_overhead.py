#!/usr/bin/env python
"""Is a run through the dashboard as trustworthy as the tool run by hand?

For each workload, the same small benchmark runs "by hand" (the tool started directly, with a command line
written here from the tool's manual, NOT built by the dashboard's driver, so a wrong option in the driver
shows up as a difference) and "through the dashboard" (POST /api/v1/runs/, a real Celery worker with -c 1,
Redis). Each round runs it by hand twice (A, B) and through the dashboard once (D), in orders balanced over
every 6 rounds (a Williams design, so what one run leaves for the next falls on every side alike). Reports the
TPS of each, and the dashboard's ratio to by hand (target >= 0.97). During those rounds nobody watches the
dashboard's run (WATCH=none: this script reads its state from the database every 2 s, or a quarter of a shorter
step), as nobody watches the tool run by hand; WATCH=page watches it as an open run page does (its one update stream:
GET ?part=live once a report interval, following the URL each answer gives), which measures what a viewer costs on top: on this
machine the web server shares the 2 cores with the tool and the database under test. One dashboard run per
workload before the counted rounds warms the worker up
(a long-lived worker has its connections and imports) and polls every 20 ms to time how long after the worker
read an interval line the sample was visible through GET /api/v1/runs/{id}/samples/?after=.

Dashboard runs carry the whole run insight, always on: server sampling (a separate connection reading
SHOW GLOBAL STATUS / pg_stat_database + pg_stat_activity every report interval, and /proc/stat), the
server settings read at the start, sysbench --histogram and pgbench's per-transaction log (-l). The
by-hand runs have none of it, so the ratio is the cost of all of it. Each dashboard round prints how
many server samples it stored and the server-side TPS agreement, to show the sampling really ran.

Because single rounds on these shared 2-core machines vary by 5-30 %, far more than the 3 % at stake, the
summary gives the geometric mean of the per-round ratios D / sqrt(A B) with its 95 % confidence interval,
and the same for the control B / A: the same command run twice, i.e. what the machine's noise alone does to
a ratio. The ratio of medians is printed beside them.

Each dashboard run also reports an independent bound that noise cannot blur: the CPU the Celery worker's own
processes used (from /proc, tools excluded), the PostgreSQL backends serving the dashboard's database and the
server probe, plus this process's CPU watching the run (answering the polls with WATCH=page), while the tool's run
step was running (from the first sample seen to the last), as a share of the machine's CPU over that time.
On a CPU-bound benchmark that is the most the dashboard can take from the tool.

Workloads: sysbench oltp_read_write on MariaDB (1 table x 10,000 rows); pgbench with Alibaba's ro.sql
and rw.sql on PostgreSQL (scale 1, range 100,000, -M prepared).

Usage:  .venv/bin/python benchmarks/runs_overhead.py [ROUNDS] [SECONDS] [THREADS] [WORKLOAD ...]
        WORKLOAD: sysbench, pgbench-ro, pgbench-rw (default: all three)
        TLS=1 .venv/bin/python benchmarks/runs_overhead.py ...: the same against TLS-only servers of its own
        (testbed/tls_servers.py: MariaDB and PostgreSQL on free ports, certificates made by openssl): by hand
        sysbench --mysql-ssl=on with cacert.pem, client-cert.pem, client-key.pem in its working directory
        (sysbench 1.0.20's MySQL TLS), pgbench with PGSSLMODE=verify-full and PGSSLROOTCERT (libpq); the
        dashboard's targets with TLS verify-ca (MySQL) and verify-full (PostgreSQL).
Uses its own database perfdash_runs_bench (PostgreSQL) and Redis db 11.
"""

import atexit
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bootstrap  # noqa: E402  (the one Django set-up: benchmarks/bootstrap.py)

ROOT = bootstrap.ROOT
from benchmarks.stats import paired_ratio, paired_verdict  # noqa: E402
os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdash_runs_bench")
os.environ["REDIS_URL"] = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/11")
os.environ.setdefault("TEST_BENCH_DB", "perfdash_sb_overhead")  # its own target databases, apart from the tests'

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
SECONDS = int(sys.argv[2]) if len(sys.argv) > 2 else 8
THREADS = int(sys.argv[3]) if len(sys.argv) > 3 else 2
WORKLOADS = sys.argv[4:] or ["sysbench", "pgbench-ro", "pgbench-rw"]
TABLES, ROWS = 1, 10000
SCALE, RANGE = 1, 100_000
SCRIPTS = ROOT / "runs" / "drivers" / "scripts"
TLS = os.environ.get("TLS") == "1"
# How often a dashboard run is looked at, by how it is watched (see dashboard()); WATCH picks it for the counted runs.
# Unwatched, every 2 s, or often enough to see a short step's samples arrive at least twice (the CPU window).
POLL_S = {"fast": 0.02, "none": min(2.0, SECONDS / 4), "page": 1.0}  # page: the quick profiles' report interval
WATCH = os.environ.get("WATCH", "none")
if WATCH not in ("none", "page"):
    sys.exit(f"WATCH={WATCH!r}: expected none (nobody watches the counted dashboard runs) or page (as an open run page does)")
# Where the by-hand commands connect: the machine's servers, or (TLS=1) the TLS-only ones started here.
MYSQL_AT = {"host": "127.0.0.1", "port": 3306, "ssl_dir": None}
PG_AT = {"host": "127.0.0.1", "port": 5432, "env": {}}


def sysbench_by_hand(db, user, password):
    """sysbench 1.0 manual: connection options --mysql-*, oltp_read_write's --tables/--table-size."""
    common = ["sysbench", "--db-driver=mysql", f"--mysql-host={MYSQL_AT['host']}", f"--mysql-port={MYSQL_AT['port']}",
              f"--mysql-user={user}", f"--mysql-db={db}", f"--tables={TABLES}", f"--table-size={ROWS}"]
    with tempfile.TemporaryDirectory() as workdir:  # the password in a 0600 options file, as the dashboard does
        if MYSQL_AT["ssl_dir"]:  # sysbench 1.0.20 --mysql-ssl=on reads these three from its working directory
            for name in ("cacert.pem", "client-cert.pem", "client-key.pem"):
                (Path(workdir) / name).write_text((Path(MYSQL_AT["ssl_dir"]) / name).read_text())
            common.append("--mysql-ssl=on")
        cfg = Path(workdir) / "pw.cfg"
        cfg.write_text(f'mysql-password="{password}"\n')
        cfg.chmod(0o600)
        opts = [f"--config-file={cfg}"]
        subprocess.run(common + opts + ["--threads=1", "oltp_read_write", "cleanup"], check=True, capture_output=True, cwd=workdir)
        subprocess.run(common + opts + ["--threads=1", "oltp_read_write", "prepare"], check=True, capture_output=True, cwd=workdir)
        out = subprocess.run(common + opts + [f"--threads={THREADS}", f"--time={SECONDS}", "--report-interval=1",
                                              "oltp_read_write", "run"], check=True, capture_output=True, text=True, cwd=workdir).stdout
        subprocess.run(common + opts + ["--threads=1", "oltp_read_write", "cleanup"], check=True, capture_output=True, cwd=workdir)
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("transactions:"))
    return float(line.split("(")[1].split()[0])


def pgbench_by_hand(script, db, user, password):
    """Alibaba's command line (pgbench -M prepared -v -r -P 1 -f ./ro.sql -c N -j N -T 120 -D scale= -D range=)
    without -r, as the dashboard runs it (pgbench 15 with -r, -P and -j > 1 measures latency wrong; -r changes
    nothing else), with the pgbench 15 manual's connection options: pgbench [OPTION]... [DBNAME]."""
    env = {**os.environ, "PGPASSWORD": password, **PG_AT["env"]}
    conn = ["-h", PG_AT["host"], "-p", str(PG_AT["port"]), "-U", user]
    subprocess.run(["pgbench", "-i", "-q", "-s", str(SCALE), *conn, db], check=True, capture_output=True, env=env)
    out = subprocess.run(["pgbench", "-M", "prepared", "-v", "-P", "1", "-c", str(THREADS), "-j", str(THREADS), "-T", str(SECONDS),
                          "-f", str(SCRIPTS / f"{script}.sql"), "-D", f"scale={SCALE}", "-D", f"range={RANGE}", *conn, db],
                         check=True, capture_output=True, text=True, env=env).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("tps = "))
    return float(line.split()[2])


# A Williams design for three sides: within these rounds each side is in each position twice and directly
# follows each other side twice.
ORDERS = (("A", "B", "D"), ("B", "D", "A"), ("D", "A", "B"), ("A", "D", "B"), ("B", "A", "D"), ("D", "B", "A"))
TICKS = os.sysconf("SC_CLK_TCK")
TOOLS = {"pgbench", "sysbench"}


def _proc_stats():
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            comm = text[text.index("(") + 1:text.rindex(")")]
            fields = text[text.rindex(")") + 2:].split()
            stats[int(entry)] = (comm, int(fields[1]), int(fields[11]) + int(fields[12]))  # ppid, utime + stime
    return stats


def worker_pids(root_pid):
    """The Celery worker's own processes (the worker and its pool processes), not the tools they start."""
    stats = _proc_stats()
    tree, changed = {root_pid}, True
    while changed:
        grown = tree | {pid for pid, (_, ppid, _) in stats.items() if ppid in tree}
        changed, tree = grown != tree, grown
    return [pid for pid in tree if stats.get(pid, ("",))[0] not in TOOLS]


def cpu_seconds(pids):
    """CPU (user + system) those processes have used so far, read from /proc (not the tools' reaped times):
    independent of the run's own output."""
    ticks = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / TICKS


def backend_pids():
    """The PostgreSQL backends of the dashboard's own database (the worker's and the API's queries) and of the
    server probe on a PostgreSQL target: their CPU is the dashboard's too. (A MariaDB target's probe runs in a
    mysqld thread that /proc cannot tell apart: its one SHOW GLOBAL STATUS a second is left out.)"""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE (datname = current_database() AND pid <> pg_backend_pid()) "
                       "OR application_name = 'perfdash-probe'")
        return [pid for (pid,) in cursor.fetchall()] + [connection.connection.info.backend_pid]


def main():
    api = bootstrap.launcher()
    from runs.models import Run, Sample, Target
    from testbed.runs_support import DB_USER, MYSQL_DB, PASSWORD, PG_DB

    targets = {}
    if TLS:
        from testbed import tls_servers

        servers = tls_servers.TLSServers(Path(tempfile.mkdtemp(prefix="perfdash-tls-bench-"))).start()
        atexit.register(servers.stop)  # whatever fails before the rounds' own clean-up
        certs = servers.root / "certs"
        ssl_dir = servers.root / "by-hand"
        ssl_dir.mkdir()
        for name, source in (("cacert.pem", "perfdash-test-ca.crt"), ("client-cert.pem", "client.crt"), ("client-key.pem", "client.key")):
            (ssl_dir / name).write_text((certs / source).read_text())
        MYSQL_AT.update(host="127.0.0.1", port=servers.mariadb_port, ssl_dir=str(ssl_dir))
        PG_AT.update(host="localhost", port=servers.pg_port,
                     env={"PGSSLMODE": "verify-full", "PGSSLROOTCERT": str(certs / "perfdash-test-ca.crt")})
        MYSQL_DB = PG_DB = tls_servers.DATABASE
        DB_USER, PASSWORD = tls_servers.USER, tls_servers.PASSWORD
        for name, engine, port, mode in (("bench-mariadb-tls", "mysql", servers.mariadb_port, "verify-ca"),
                                         ("bench-postgresql-tls", "postgresql", servers.pg_port, "verify-full")):
            target, _ = Target.objects.update_or_create(name=name, defaults=dict(
                engine=engine, host="localhost", port=port, database=tls_servers.DATABASE, user=DB_USER, tls_mode=mode,
                tls_ca=servers.ca_pem, tls_cert=servers.client_cert_pem))
            target.set_password(PASSWORD)
            target.set_tls_key(servers.client_key_pem)
            target.save()
            targets[engine] = target
    else:
        servers = None
    for name, engine in (() if TLS else (("bench-mariadb", "mysql"), ("bench-postgresql", "postgresql"))):
        targets[engine] = bootstrap.local_target(name, engine)

    workloads = {
        "sysbench": (lambda: sysbench_by_hand(MYSQL_DB, DB_USER, PASSWORD), targets["mysql"], "sysbench-oltp-rw-mysql-quick",
                     {"tables": TABLES, "rows_per_table": ROWS}),
        "pgbench-ro": (lambda: pgbench_by_hand("ro", PG_DB, DB_USER, PASSWORD), targets["postgresql"], "pgbench-ro-quick",
                       {"scale": SCALE, "range": RANGE}),
        "pgbench-rw": (lambda: pgbench_by_hand("rw", PG_DB, DB_USER, PASSWORD), targets["postgresql"], "pgbench-rw-quick",
                       {"scale": SCALE, "range": RANGE}),
    }

    env = {**os.environ, "CONN_MAX_AGE": "0"}
    worker = subprocess.Popen([str(Path(sys.executable).parent / "celery"), "-A", "config", "worker", "-Q", "celery,benchmarks",
                               "-c", "1", "-n", "bench@%h", "--without-gossip", "--without-mingle", "-l", "WARNING"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(4)

    def page_live_url(html):
        """The URL the run page's #run-live asks next (None once the run has ended)."""
        found = re.search(r'<div id="run-live"[^>]*hx-get="([^"]+)"', html)
        return found and found.group(1).replace("&amp;", "&")

    def dashboard(target, profile, sizes, watch):
        """One dashboard run, watched as `watch` says: "fast" (the API every 20 ms, to time how soon a sample is
        visible), "none" (nobody watching: its samples and state read from the database every 2 s, as cheaply as
        can be) or "page" (as an open run page watches it: its one update stream, the page's #run-live asking
        ?part=live once a report interval and following the URL each answer gives)."""
        pids = worker_pids(worker.pid)
        response = api.post("/api/v1/runs/", {"target": target.pk, "profile": profile, "overrides": {
            # no warm-up step: the tool by hand has none either (like against like)
            "threads": THREADS, "duration_s": SECONDS, "warmup_s": 0, **sizes}}, format="json")
        assert response.status_code == 201, response.content
        run_id, after, seen, window = response.json()["id"], 0, {}, []
        live_url = page_live_url(api.get(Run.objects.get(pk=run_id).get_absolute_url()).content.decode()) if watch == "page" else None
        while True:
            if watch == "none":
                new = list(Sample.objects.filter(run_id=run_id, id__gt=after).values_list("id", flat=True))
                state = Run.objects.filter(pk=run_id).values_list("state", flat=True).get()
            elif watch == "page":
                html = api.get(live_url, HTTP_HX_REQUEST="true").content.decode()
                data = json.loads(re.search(r'<script id="run-live-data" type="application/json">(.*?)</script>', html, re.S).group(1))
                new = [sample["id"] for sample in data["samples"]]
                state = re.search(r'id="run-status" data-final="\w+" data-state="(\w+)"', html).group(1)
                live_url = page_live_url(html)  # None once the run has ended: the page stops asking
            else:
                body = api.get(f"/api/v1/runs/{run_id}/samples/?after={after}").json()
                new, state = [sample["id"] for sample in body["results"]], body["state"]
            now = time.time()
            for sample_id in new:
                seen[sample_id] = now
                after = sample_id
            if new and state == "running":
                if not window:  # the PostgreSQL backends serving the dashboard: its own database and the probe
                    pids = pids + backend_pids()
                # (dashboard CPU, this process's CPU, wall time) whenever a new interval line arrived: the first and
                # the last of these bracket the tool's run step.
                window.append((cpu_seconds(pids), time.process_time(), time.monotonic()))
            if state in ("succeeded", "failed", "cancelled") and (not new or live_url is None and watch == "page"):
                break
            time.sleep(POLL_S[watch])
        run = Run.objects.get(pk=run_id)
        assert run.state == "succeeded", run.reason
        assert len(window) >= 2 and window[-1][2] > window[0][2], "the step was too short to bracket its CPU window: give it 4 s or more"
        (w0, a0, t0), (w1, a1, t1) = window[0], window[-1]
        worker_cpu, api_cpu = w1 - w0, a1 - a0  # this process watching the run (with WATCH=page: the web's part)
        worker_share = 100 * (worker_cpu + api_cpu) / ((t1 - t0) * os.cpu_count())
        delays = [seen[s.id] - s.received_at.timestamp() for s in run.samples.all()]
        server = (run.insight.get("steps") or [{}])[0].get("server") or {}
        latency = (run.insight.get("steps") or [{}])[0].get("latency") or {}
        evidence = (f"server samples {run.server_samples.count()}, server TPS agreement {server.get('agreement_pct')} %, "
                    f"latency from {latency.get('method')} (p99 {latency.get('p99_ms')} ms), client-bound {run.client_bound}, "
                    f"during the step: worker and its database backends CPU {worker_cpu:.2f} s + watching {api_cpu:.2f} s over {t1 - t0:.1f} s = "
                    f"{worker_share:.1f} % of the machine's")
        assert run.server_samples.exists() and server.get("tps"), "server sampling did not run"
        return run.summary["tps"], delays, evidence, worker_share

    results, shares = {}, {}
    try:
        for name in WORKLOADS:
            by_hand, target, profile, sizes = workloads[name]
            hand, dash = [], []
            # Not counted: warms the worker up, and is polled every 20 ms to time how soon a sample is visible.
            _, delays, _, _ = dashboard(target, profile, sizes, "fast")
            for i in range(ROUNDS):
                # Each round: the tool by hand twice (A, B) and once through the dashboard (D), in the orders of a
                # Williams design: over 6 rounds each side runs first, second and last twice, and follows each other
                # side twice, so whatever one run leaves behind for the next (a checkpoint, autovacuum, a warm
                # cache) falls on every side alike. (A plain rotation, A B D / D A B / B D A, made A follow D in
                # nearly every round.) B against A is the control: the same command twice, i.e. how far this
                # machine's noise alone moves a ratio.
                # Watched as WATCH says (polling every 20 ms in this process would take CPU from the benchmark).
                order = ORDERS[i % len(ORDERS)]
                got = {}
                for side in order:
                    if side == "D":
                        got["D"], _, evidence, share = dashboard(target, profile, sizes, WATCH)
                    else:
                        got[side] = by_hand()
                hand.append((got["A"], got["B"]))
                dash.append(got["D"])
                shares.setdefault(name, []).append(share)
                h = math.sqrt(got["A"] * got["B"])
                print(f"{name} round {i + 1} ({' '.join(order)}): by hand A {got['A']:9.2f} B {got['B']:9.2f} TPS   "
                      f"dashboard {got['D']:9.2f} TPS   ratio D/AB {got['D'] / h:.3f}   control B/A {got['B'] / got['A']:.3f}   "
                      f"[{evidence}]", flush=True)
            results[name] = (hand, dash, delays)
    finally:
        os.killpg(worker.pid, 15)
        worker.wait()
        if servers is not None:
            servers.stop()

    print()
    print(f"{ROUNDS} rounds per workload (by hand twice, dashboard once, orders balanced: a Williams design), {THREADS} threads/clients, {SECONDS} s, report every 1 s; "
          f"dashboard runs with server sampling, settings, sysbench --histogram / pgbench -l on; "
          f"{'TLS (MySQL verify-ca, PostgreSQL verify-full, both sides); ' if TLS else 'TLS off; '}"
          f"dashboard runs watched: {WATCH} ({'as an open run page watches them' if WATCH == 'page' else 'nobody watching'}); "
          f"machine: {os.cpu_count()} cores, shared with other test suites (load average at the end: "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])})")
    for name, (hand, dash, delays) in results.items():
        pooled = [math.sqrt(a * b) for a, b in hand]  # each round's by-hand TPS: the geometric mean of A and B
        ratio = statistics.median(dash) / statistics.median(pooled)
        gmean, low, high = paired_ratio(pooled, dash)
        control, c_low, c_high = paired_ratio([a for a, _ in hand], [b for _, b in hand])
        # The dashboard's verdict rule on the rounds as blocks, with the target's 3 % as the practical threshold.
        verdict = paired_verdict(pooled, dash, threshold_pct=3.0)
        delays_ms = sorted(1000 * x for x in delays)
        print(f"{name:11s} median TPS by hand {statistics.median(pooled):9.2f}, dashboard {statistics.median(dash):9.2f}; "
              f"ratio of medians {ratio:.3f}; geometric mean of the paired ratios D/AB {gmean:.3f} (95 % CI {low:.3f}-{high:.3f}; "
              f"target >= 0.97: {'met' if gmean >= 0.97 else 'NOT met'}; verdict at 3 %, {verdict.method}: {verdict.verdict}"
              f"{f', about {verdict.more_runs} more rounds would decide' if verdict.more_runs else ''}); control B/A (by hand twice) {control:.3f} "
              f"(95 % CI {c_low:.3f}-{c_high:.3f}); sample visible after median {statistics.median(delays_ms):.0f} ms, "
              f"max {delays_ms[-1]:.0f} ms")
    for name, values in shares.items():
        print(f"{name:11s} the dashboard's CPU (worker, its PostgreSQL backends, watching the run) while the tool ran, as a share of the machine's CPU: "
              f"median {statistics.median(values):.1f} %, max {max(values):.1f} % (the most the dashboard can take from a "
              f"CPU-bound tool; ratio 0.97 = 3 %)")


if __name__ == "__main__":
    main()
