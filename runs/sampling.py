"""Evidence beside the tool, read by the worker during a run step: the server's own counters on a
separate connection (runs/access.py opens it: the password passed to the driver in memory, never a shell,
argv or file) and the client host's CPU from /proc/stat, every report interval. Knows nothing of
Django: the Execution stores what it reads (runs/insight.py turns readings into rates)."""

import hashlib
import os
import platform
import threading
import time
from datetime import datetime, timezone

import psycopg
import pymysql

from .access import ConnectionFailed, tool_sessions_tls
from .drivers import redact

TIMEOUT_S = 5
APPLICATION_NAME = "perfdash-probe"  # how the server lists the probe's connection
MYSQL_STATUS = ("Com_commit", "Com_rollback", "Questions", "Threads_running", "Innodb_buffer_pool_read_requests",
                "Innodb_buffer_pool_reads", "Innodb_row_lock_waits")
PG_DATABASE = ("xact_commit", "xact_rollback", "blks_hit", "blks_read", "deadlocks")




def client_load(path="/proc/loadavg"):
    """The client host's load averages (1, 5, 15 minutes) and its cores, as the kernel reports them."""
    with open(path) as fh:
        load = [float(v) for v in fh.read().split()[:3]]
    return {"load": load, "cores": os.cpu_count() or 1}


def disturbed(reading, limit_per_core):
    """Whether a start reading of client_load shows the host loaded beyond `limit_per_core` (settings
    RUNS_CLIENT_LOAD_LIMIT_PER_CORE, 1: more runnable work than cores before the tool began, so the tool competed
    for the client's CPU; issue 46.6). Only the start counts: the end reading's averages include the tool's own
    threads."""
    return reading["load"][0] / reading["cores"] > limit_per_core


def cpu_times(path="/proc/stat"):
    """(busy, total) jiffies of all the host's CPUs: busy excludes idle and iowait."""
    with open(path) as fh:
        fields = [int(v) for v in fh.readline().split()[1:]]
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest time is inside user)
    return total - fields[3] - fields[4], total


def client_info(tool_version_text=""):
    """The client host's fingerprint: cores, memory, OS, kernel, Python, the tool's own version line."""
    memory_kb = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    memory_kb = int(line.split()[1])
    except OSError:
        pass
    os_name = ""
    try:
        os_name = platform.freedesktop_os_release().get("PRETTY_NAME", "")
    except OSError:
        pass
    cpu_model = ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu_model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "")
    except OSError:
        pass
    return {"host": platform.node(), "cores": os.cpu_count(), "cpu_model": cpu_model,
            "memory_mb": memory_kb // 1024 if memory_kb else None, "os": os_name or platform.platform(),
            "kernel": platform.release(), "python": platform.python_version(),
            "tool_build": tool_version_text.strip().splitlines()[0] if tool_version_text.strip() else ""}


def settings_hash(settings):
    """sha256 of the server's settings as sorted name=value lines: equal hashes, equal settings."""
    text = "\n".join(f"{k}={settings[k]}" for k in sorted(settings))
    return hashlib.sha256(text.encode()).hexdigest()


class ProbeFailed(Exception):
    pass


class ServerProbe:
    """One connection to the target, apart from the tool's, reading the server's own counters. Opened by the
    target's one description of how to reach it (runs/access.py), TLS included."""

    def __init__(self, access):
        self.engine, self.password, self.secrets = access.engine, access.password, access.secrets
        self.user, self.database = access.user, access.database
        self.tls_wanted, self.tool_tls = False, None  # the server's view of the tool's sessions, read once when asked
        try:
            self.conn = access.connect(application_name=APPLICATION_NAME)
        except ConnectionFailed as exc:
            raise ProbeFailed(str(exc)) from None

    def _clean(self, exc):
        message = str(exc) or exc.__class__.__name__
        return redact(message, self.secrets)

    def _rows(self, sql, args=None):
        try:
            if self.engine == "mysql":
                with self.conn.cursor() as cur:
                    cur.execute(sql, args)
                    return cur.fetchall()
            return self.conn.execute(sql, args).fetchall()
        except (pymysql.MySQLError, psycopg.Error, OSError) as exc:
            raise ProbeFailed(self._clean(exc)) from None

    def counters(self):
        """The server's cumulative counters and gauges now, under the names of its own views; when asked
        (tls_wanted), the TLS of the tool's sessions as well, in the same transaction (one commit per reading)."""
        if not self.tls_wanted:
            return self._counters()
        try:
            if self.engine == "mysql":
                values = self._counters()
                self.tool_tls = tool_sessions_tls(self.conn, self.engine, self.user, self.database)
            else:
                with self.conn.transaction():
                    values = self._counters()
                    self.tool_tls = tool_sessions_tls(self.conn, self.engine, self.user, self.database, [APPLICATION_NAME])
        except (pymysql.MySQLError, psycopg.Error, OSError) as exc:
            raise ProbeFailed(self._clean(exc)) from None
        if self.tool_tls.get("sessions") or "unavailable" in self.tool_tls:
            self.tls_wanted = False  # else the tool has not connected yet: again at the next reading
        return values

    def _counters(self):
        if self.engine == "mysql":
            names = ", ".join(f"'{n}'" for n in MYSQL_STATUS)
            values = {name: int(value) for name, value in self._rows(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")}
            values["Threads_running"] = max(0, values.get("Threads_running", 1) - 1)  # not this probe's own SHOW
            return values
        # One statement, one transaction: the probe adds exactly one commit of its own per reading
        # (runs/insight.py takes it off). Statistics are read from a fresh snapshot each time.
        row = self._rows(
            f"SELECT {', '.join(PG_DATABASE)}, (SELECT count(*) FROM pg_stat_activity a WHERE a.datname = d.datname "
            "AND a.state = 'active' AND a.pid <> pg_backend_pid()), (SELECT count(*) FROM pg_stat_activity a "
            "WHERE a.datname = d.datname AND a.wait_event_type = 'Lock') "
            "FROM pg_stat_database d WHERE d.datname = current_database()")[0]
        values = dict(zip((*PG_DATABASE, "active_backends", "lock_waiting_backends"), (int(v) for v in row)))
        return values

    def settings(self):
        """SHOW GLOBAL VARIABLES / pg_settings as {name: value (with its unit)}."""
        if self.engine == "mysql":
            return {name: str(value) for name, value in self._rows("SHOW GLOBAL VARIABLES")}
        return {name: f"{setting}{' ' + unit if unit else ''}" for name, setting, unit in
                self._rows("SELECT name, setting, unit FROM pg_settings ORDER BY name")}

    def close(self):
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001 - closing a broken connection
            pass


def reading(probe, t):
    """One reading: seconds since the step started, wall-clock time, CPU times, the server's counters."""
    return {"t": round(t, 3), "at": datetime.now(timezone.utc).isoformat(), "cpu": cpu_times(),
            "server": probe.counters() if probe else None}


class Sampler(threading.Thread):
    """Reads the server and the CPU every interval_s while a step runs; `readings` grows as it goes
    (a baseline just before the tool starts, the last one after it exits). A probe error stops the
    server part (noted in `error`), never the run."""

    def __init__(self, probe, interval_s):
        super().__init__(daemon=True, name="perfdash-sampler")
        self.probe, self.interval_s, self.settle_s = probe, interval_s, 0.0
        self.readings, self.error = [], ""
        self.stopping = threading.Event()
        self.t0 = time.monotonic()
        self.lock = threading.Lock()
        self._take()  # baseline

    def _take(self):
        try:
            value = reading(self.probe, time.monotonic() - self.t0)
        except ProbeFailed as exc:
            self.error, self.probe = str(exc), None
            value = reading(None, time.monotonic() - self.t0)
        with self.lock:
            self.readings.append(value)

    def run(self):
        next_at = self.t0 + self.interval_s
        while not self.stopping.wait(max(0.0, next_at - time.monotonic())):
            self._take()
            next_at += self.interval_s
        if self.settle_s:
            time.sleep(self.settle_s)
        self._take()  # the last reading, after the tool exited

    def drain(self, start):
        with self.lock:
            return self.readings[start:]

    def finish(self, settle_s=0.0, server_silent=False):
        """Stop after one last reading (settle_s later: PostgreSQL backends flush their counters as they
        exit). A server that does not answer in time (or is known not to: server_silent) is left behind (the
        thread is a daemon): the step goes on."""
        self.settle_s = settle_s
        self.stopping.set()
        self.join(timeout=0.2 if server_silent else settle_s + 3 * TIMEOUT_S)
        if self.is_alive():
            self.error = self.error or f"the server did not answer the probe within {3 * TIMEOUT_S} s"
            self.probe = None
        with self.lock:
            return list(self.readings)
