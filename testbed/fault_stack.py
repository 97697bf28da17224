"""A production-shaped stack for fault tests and drills: a Redis server of its own (killed and restarted
at will), gunicorn serving the site (DEBUG off, persistent database connections), a benchmark worker
(-Q benchmarks -c 1) and the reconciler (celery -B -Q celery), all on one PostgreSQL database.

Used by tests/test_faults.py and benchmarks/fault_drill.py. Every process is started here, in its own
session, and stopped here by its own pid; nothing else on the machine is touched."""

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import requests

from .runs_support import wait_for

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc, sig=signal.SIGTERM, timeout=20):
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class Stack:
    # Short periods so a drill takes seconds, not minutes; production defaults are in config/settings.py.
    RUNS_ENV = {
        "RUNS_RECONCILE_EVERY_SECONDS": "1",
        "RUNS_REQUEUE_AFTER_SECONDS": "3",
        "RUNS_UNCLAIMED_FAIL_SECONDS": "20",  # longer than a worker takes to (re)start here
        "RUNS_STALE_AFTER_SECONDS": "10",
        "RUNS_WAIT_RETRY_SECONDS": "1",
        # As the suite's own worker (runs_support.worker_env): the suite loads the machine beyond its cores, and a run
        # that began on a loaded client would be "disturbed", left out of its cell's series and run again; the limit
        # itself is tested with a worker of its own (tests/test_runs_disturbed.py).
        "RUNS_CLIENT_LOAD_LIMIT_PER_CORE": "1000",
    }

    def __init__(self, database_url, redis_port, workdir):
        self.database_url = database_url
        self.redis_port = redis_port
        self.redis_url = f"redis://127.0.0.1:{redis_port}/0"
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.tmp = self.dir / "tmp"  # the workers' TMPDIR: where their run work directories go
        self.tmp.mkdir(exist_ok=True)
        self.static = self.dir / "static"
        self.web_port = free_port()
        self.redis = self.web = self.bench = self.reconciler = None
        self.bench_count = 0

    @property
    def url(self):
        return f"http://127.0.0.1:{self.web_port}"

    def env(self, **extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_SETTINGS"))}
        env.update(
            DATABASE_URL=self.database_url, REDIS_URL=self.redis_url, DJANGO_SETTINGS_MODULE="config.settings",
            DEBUG="0", STATIC_ROOT=str(self.static), TMPDIR=str(self.tmp), CONN_MAX_AGE="60", **self.RUNS_ENV,
        )
        env.update(extra)
        return env

    def log(self, name):
        return open(self.dir / f"{name}.log", "a")

    def read_log(self, name):
        path = self.dir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    # --- Redis ------------------------------------------------------------------------------------
    def start_redis(self):
        """A fresh, empty Redis (no persistence: a restart loses every queued message). A port another process holds
        fails at once, saying so: its server would answer the pings and the drills would kill and count the wrong one."""
        with socket.socket() as probe:
            # As redis-server binds: SO_REUSEADDR, so the last Redis's closed connections (TIME_WAIT) do not count.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", self.redis_port))
            except OSError:
                raise RuntimeError(f"port {self.redis_port} is taken by another process: choose a free one for this "
                                   "stack's Redis") from None
        self.redis = subprocess.Popen(
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.dir)],
            stdout=self.log("redis"), stderr=subprocess.STDOUT, start_new_session=True)
        import redis

        client = redis.Redis(port=self.redis_port)
        wait_for(lambda: self._ping(client), timeout=10, message="redis to answer")
        if self.redis.poll() is not None:  # another server took the port meanwhile and answered for it
            raise RuntimeError(f"this stack's Redis exited at once: port {self.redis_port} is taken")

    @staticmethod
    def _ping(client):
        try:
            return client.ping()
        except Exception:  # noqa: BLE001
            return False

    def kill_redis(self):
        stop(self.redis, signal.SIGKILL)
        self.redis = None

    # --- web ---------------------------------------------------------------------------------------
    def collectstatic(self):
        if not (self.static / "staticfiles.json").exists():
            subprocess.run([str(BIN / "python"), "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT,
                           env=self.env(), check=True)

    def start_web(self):
        self.collectstatic()
        self.web = subprocess.Popen(
            [str(BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{self.web_port}", "--workers", "1",
             "--timeout", "60", "--access-logfile", "-", "--no-control-socket"],
            cwd=ROOT, env=self.env(), stdout=self.log("web"), stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(lambda: self._answers("/api/v1/"), timeout=30, message="gunicorn to answer")

    def _answers(self, path):
        try:
            return requests.get(self.url + path, timeout=2).status_code < 500
        except requests.RequestException:
            return False

    # --- workers ---------------------------------------------------------------------------------
    def _celery(self, name, args):
        proc = subprocess.Popen(
            [str(BIN / "celery"), "-A", "config", "worker", *args, "-n", f"{name}@%h", "--without-gossip",
             "--without-mingle", "-l", "INFO"],
            cwd=ROOT, env=self.env(), stdout=self.log(name), stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(lambda: " ready." in self.read_log(name) or proc.poll() is not None, timeout=40,
                 message=f"celery worker {name} to be ready")
        assert proc.poll() is None, self.read_log(name)[-3000:]
        return proc

    def start_bench(self):
        """A benchmark worker, a new node name each time (so its log says when *this* one is ready)."""
        self.bench_count += 1
        self.bench = self._celery(f"fault-bench{self.bench_count}", ["-Q", "benchmarks", "-c", "1"])
        return self.bench

    def start_reconciler(self):
        self.reconciler = self._celery("fault-reconciler", ["-B", "-Q", "celery", "-c", "1", "--schedule",
                                                            str(self.dir / "celerybeat-schedule")])

    def start(self):
        self.start_redis()
        self.start_web()
        self.start_reconciler()
        self.start_bench()
        return self

    def stop(self):
        for proc in (self.bench, self.reconciler, self.web):
            stop(proc)
        stop(self.redis, signal.SIGKILL)

    def cleanup_files(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def files_containing(secret, *roots, since=0.0):
    """Paths of regular files under roots whose bytes contain secret (unreadable ones skipped), written
    at or after `since` (a file older than the test is another checkout's or an older run's, not ours)."""
    needle = secret.encode()
    found = []
    for root in roots:
        for dirpath, _, names in os.walk(root):
            for name in names:
                path = os.path.join(dirpath, name)
                try:
                    if not os.path.isfile(path) or os.path.getsize(path) > 50_000_000 or os.path.getmtime(path) < since:
                        continue
                    with open(path, "rb") as fh:
                        if needle in fh.read():
                            found.append(path)
                except OSError:
                    continue
    return found
