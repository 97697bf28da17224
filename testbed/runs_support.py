"""Shared fixtures of the runs tests: real database users with passwords on the machine's MariaDB and
PostgreSQL, committed rows a real Celery worker process can see, and the worker itself.

The worker tests are transactional (the worker is another process and must see committed rows); the
flush after each of them empties the catalogue imported for the session, which tests/conftest.py imports
again before the next test that reads it. The fixtures (bench_users, committed, worker) are in conftest.py,
one definition for every module."""

import os
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pymysql
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "Pw-s3cr3t,#x'z"  # a comma and a hash: sysbench's config file must quote it
DB_USER = "perfdash_bench"
# Another name lets two checkouts run their suites side by side on one machine's servers.
MYSQL_DB = PG_DB = os.environ.get("TEST_BENCH_DB", "perfdash_sb")


# The least a target's user needs (docs/runs.md, "A target's database and user": the same statements, which
# tests/test_runs_least_privilege.py holds the page to): the tools' tables in their own database, and what the
# server-side evidence reads beside them.
def mysql_grants(database, account):
    return [f"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX ON {database}.* TO {account}",
            # the server's view of the tool's sessions' TLS (performance_schema.status_by_thread, threads)
            f"GRANT SELECT ON performance_schema.* TO {account}"]


def postgresql_grants(database, role):
    """(statements in any database, statements in the target's database)."""
    return ([f"GRANT CONNECT ON DATABASE {database} TO {role}",
             # other sessions' state and TLS (pg_stat_activity, pg_stat_ssl); every setting in pg_settings
             f"GRANT pg_read_all_stats, pg_read_all_settings TO {role}"],
            [f"GRANT USAGE, CREATE ON SCHEMA public TO {role}"])


def ensure_database_users():
    """A dedicated user with a password on each server (idempotent), with the least rights a run needs: neither
    root nor a superuser, nor the owner of its database (the database an administrator's)."""
    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="", autocommit=True)
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS {MYSQL_DB}")
        quoted = conn.escape(PASSWORD)
        for host in ("127.0.0.1", "localhost", "%"):
            account = f"'{DB_USER}'@'{host}'"
            cur.execute(f"CREATE USER IF NOT EXISTS {account} IDENTIFIED BY {quoted}")
            cur.execute(f"ALTER USER {account} IDENTIFIED BY {quoted}")
            try:  # what an earlier version of this fixture granted (ALL) goes first
                cur.execute(f"REVOKE ALL PRIVILEGES ON {MYSQL_DB}.* FROM {account}")
            except pymysql.MySQLError as exc:
                if exc.args[0] != 1141:  # ER_NONEXISTING_GRANT: nothing granted on it yet
                    raise
            for statement in mysql_grants(MYSQL_DB, account):
                cur.execute(statement)
    conn.close()
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as pg:
        exists = pg.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [DB_USER]).fetchone()
        pw = PASSWORD.replace("'", "''")
        pg.execute(f"{'ALTER' if exists else 'CREATE'} ROLE {DB_USER} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '{pw}'")
        if not pg.execute("SELECT 1 FROM pg_database WHERE datname = %s", [PG_DB]).fetchone():
            pg.execute(f"CREATE DATABASE {PG_DB}")
        pg.execute(f"ALTER DATABASE {PG_DB} OWNER TO postgres")  # an earlier version made the user its owner
        server_wide, in_database = postgresql_grants(PG_DB, DB_USER)
        for statement in server_wide:
            pg.execute(statement)
    with psycopg.connect(f"postgresql://postgres@127.0.0.1:5432/{PG_DB}", autocommit=True) as pg:
        for statement in in_database:
            pg.execute(statement)


def make_targets():
    from runs.models import Target

    targets = {}
    for name, engine, port, db in (("mariadb", "mysql", 3306, MYSQL_DB), ("postgresql", "postgresql", 5432, PG_DB)):
        target = Target(name=f"local-{name}", engine=engine, host="127.0.0.1", port=port, database=db, user=DB_USER,
                        vcpus=2, memory_gb=4, family="general")
        target.set_password(PASSWORD)
        target.save()
        targets[engine] = target
    return targets


# How every worker the suite starts delivers webhooks (tests/test_webhooks.py): to the tests' own receivers on
# 127.0.0.1, retrying quickly, a hook disabled after 2 failed deliveries of 3 attempts. All of them, so that whichever
# worker of the process consumes a delivery (the session's or a module's own) delivers it the same way.
WEBHOOK_DISABLE_AFTER, WEBHOOK_ATTEMPTS = 2, 3
WEBHOOK_ENV = {"WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "true", "WEBHOOK_RETRY_BASE_SECONDS": "0.3",
               "WEBHOOK_DISABLE_AFTER_FAILURES": str(WEBHOOK_DISABLE_AFTER), "WEBHOOK_MAX_ATTEMPTS": str(WEBHOOK_ATTEMPTS)}


def worker_env():
    db = settings.DATABASES["default"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        REDIS_URL=os.environ["REDIS_URL"], DJANGO_SETTINGS_MODULE="config.settings", CONN_MAX_AGE="0",
        RUNS_WAIT_RETRY_SECONDS="1", **WEBHOOK_ENV,
        # The suite loads this 2-core machine beyond its cores by design (two test processes, their workers, the
        # servers): every run would be "disturbed" and left out of the verdicts the tests check. The rule is
        # tested by tests/test_runs_disturbed.py with a worker of its own at limits that decide it.
        RUNS_CLIENT_LOAD_LIMIT_PER_CORE="1000",
    )
    return env


def start_worker(queues="celery,benchmarks", concurrency=2, name="runs-test", env=None):
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "celery"), "-A", "config", "worker", "-Q", queues, "-c", str(concurrency),
         "-n", f"{name}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "INFO"],
        cwd=ROOT, env={**worker_env(), **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True,
    )
    deadline = time.monotonic() + 30
    lines = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if " ready." in line:
            break
        if proc.poll() is not None:
            raise RuntimeError("celery worker did not start:\n" + "".join(lines))
    else:
        stop_worker(proc)
        raise RuntimeError("celery worker not ready in 30 s:\n" + "".join(lines))
    # Keep draining its output so the pipe never fills.
    import threading

    proc.output = lines
    threading.Thread(target=lambda: [lines.append(ln) for ln in proc.stdout], daemon=True).start()
    return proc


def stop_worker(proc, sig=signal.SIGTERM):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def purge_queues():
    """Empty the test queues, including messages a killed worker left unacknowledged."""
    import redis

    from config.celery import app

    redis.Redis.from_url(os.environ["REDIS_URL"]).delete("unacked", "unacked_index", "unacked_mutex")

    with app.connection_for_write() as conn:
        for queue in ("celery", "benchmarks", "kill-test", "multi-test", "tls-test", "remote-test", "target-faults", "target-faults-nograce"):
            try:
                conn.default_channel.queue_purge(queue)
            except Exception:  # noqa: BLE001 - a queue that does not exist yet
                pass


def wait_for(predicate, timeout=60, interval=0.2, message="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")


def wait_final(run_id, timeout=90):
    from runs.models import Run

    return wait_for(lambda: (r := Run.objects.get(pk=run_id)).is_final and r, timeout, message=f"run {run_id} to finish")


def tool_processes(marker):
    """(pid, argv) of the processes whose command line or working directory contains marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = [a for a in (entry / "cmdline").read_bytes().split(b"\0") if a]
        except OSError:
            continue
        if not argv:  # a zombie (exited, not yet reaped) has no command line left to check
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            cwd = ""
        if argv and (marker in cwd or any(marker.encode() in a for a in argv)) and int(entry.name) != os.getpid():
            found.append((int(entry.name), [a.decode(errors="replace") for a in argv]))
    return found


def make_user(username, staff=False, operator=False):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username, password="x-Pass-123456", is_staff=staff)
    if operator:
        group, _ = Group.objects.get_or_create(name="benchmark operators")
        user.groups.add(group)
    return user


def run_processes(run_id):
    """The tool processes of a run: they run in (and sysbench reads its config from) perfdash-run<id>-*."""
    import tempfile

    return tool_processes(os.path.join(tempfile.gettempdir(), f"perfdash-run{run_id}-"))


def private_tmp(tmp_path_factory, name):
    """A worker's TMPDIR (mode 0700): its run directories and every file of theirs live here, so a test can see
    what is left behind."""
    path = tmp_path_factory.mktemp(name)
    os.chmod(path, 0o700)
    return path


@contextmanager
def queue_worker(queue, name, tmp, concurrency=2, **env):
    """A benchmark worker of a test module's own, on its own queue, with `tmp` as its TMPDIR."""
    purge_queues()
    proc = start_worker(queues=queue, concurrency=concurrency, name=name, env={"TMPDIR": str(tmp), **env})
    try:
        yield proc
    finally:
        stop_worker(proc)
        purge_queues()


def keep_step_logs(run_id, into):
    """Hard links, in `into`, to the pgbench -l logs of run step 1 of every client host of the run, while pgbench writes
    them (each client removes its own once read): what pgbench itself logged of that very step. Returns the predicate
    to poll until the run ends."""
    import tempfile

    from runs.models import Run
    from runs.workdir import WORKDIR_PREFIX

    def poll():
        for path in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}{run_id}-*/latency-step1.*"):
            link = Path(into) / f"{path.parent.name}-{path.name}"
            if not link.exists():
                try:
                    os.link(path, link)
                except FileNotFoundError:
                    pass  # read and removed between the glob and the link: the step is over
        return Run.objects.get(pk=run_id).is_final
    return poll


def logged_steps(log):
    """The run log cut at each tool command the engine logged ('$ <argv>'): [(command line, what the tool printed
    after it)], in order. A warm-up is a step of its own (sysbench's `run` or pgbench with a shorter -T) before the
    measured one."""
    steps = []
    for line in log.splitlines():
        if line.startswith("$ "):
            steps.append([line, []])
        elif steps:
            steps[-1][1].append(line)
    return [(command, "\n".join(lines)) for command, lines in steps]


def printed_intervals(text):
    """The seconds of sysbench's interval lines ('[ 3s ] thds: ...') in a step's output."""
    return [float(m) for m in re.findall(r"^\[ (\d+)s \] thds:", text, re.M)]


def seed_profiles_for_tests():
    """The seeded profiles, their quick variants without the 2 s warm-up step: on two cores each run's seconds
    count, and a test about anything but the warm-up reads one measured step (tests/test_runs_warmup.py runs the
    quick profiles as seeded)."""
    from django.core.management import call_command

    from runs.models import BenchmarkProfile

    call_command("seed_profiles", stdout=open(os.devnull, "w"))
    BenchmarkProfile.objects.filter(quick=True).update(warmup_s=0)
