"""How to reach a target: the one description every consumer takes its connection from.

`TargetAccess.of(target)` holds the host (name or address, IPv6 too), port, database, user, password and
TLS settings. From it come the dashboard's own connections (test connection, server probe, fingerprint,
round trip, the server's view of the tool's TLS: `connect()`), and each tool's connection, environment and
files (`tool_setup()`). Nothing else opens a connection to a target.

TLS modes are libpq's. What each verifies, per client:

| mode        | libpq (pgbench, sysbench pgsql, the probe) | pymysql (the probe)          | sysbench 1.0.20 MySQL (libmariadb)          |
|-------------|--------------------------------------------|------------------------------|---------------------------------------------|
| disable     | no TLS                                     | no TLS                       | --mysql-ssl=off                             |
| require     | encrypted; chain checked if a CA is given  | encrypted, nothing checked   | --mysql-ssl=on: chain checked (CA, client cert and key needed) |
| verify-ca   | chain against the CA                       | chain against the CA         | the same as require                         |
| verify-full | chain and host name                        | chain and host name          | refused: this build never checks the host name |

Key material reaches a tool as files in its private work directory (0600, removed with it); the
dashboard's own connections read it from a private temporary directory removed once connected. Never argv."""

import os
import re
import shutil
import ssl
import statistics
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import psycopg
import pymysql

from .drivers import CA_FILE, CERT_FILE, KEY_FILE, Connection, redact
from .workdir import TLS_DIR_PREFIX

TIMEOUT_S = 5
# Everything the dashboard asks a target outside a tool (test connection, version, round trip, settings) is given up
# on after this long: a connection attempt's TIMEOUT_S and its few queries.
BOUND_S = 2 * TIMEOUT_S
TLS_MODES = ("disable", "require", "verify-ca", "verify-full")
# File names in a tool's work directory. sysbench's MySQL driver (1.0.20) opens exactly these three
# relative names when --mysql-ssl=on; libpq is told the same files through PGSSLROOTCERT / PGSSLCERT / PGSSLKEY.
ROUND_TRIP_QUERIES = 7


class ConnectionFailed(Exception):
    pass


class Unsupported(Exception):
    """A tool cannot honour the target's TLS mode: refused rather than connecting with less."""


@dataclass(frozen=True)
class TLSSettings:
    mode: str = "disable"
    ca_pem: str = ""
    cert_pem: str = ""
    key_pem: str = field(default="", repr=False)

    @property
    def on(self):
        return self.mode != "disable"

    def files(self):
        """{file name: content} of the material given."""
        found = {CA_FILE: self.ca_pem, CERT_FILE: self.cert_pem, KEY_FILE: self.key_pem}
        return {name: content for name, content in found.items() if content}


@dataclass(frozen=True)
class ToolSetup:
    """What a tool run needs beyond its argv: the connection its driver builds the argv from, environment
    variables, files piped to it (runs/runner.py) and files written into its work directory (0600)."""

    conn: Connection
    env: dict
    pipe_files: dict
    disk_files: dict


@dataclass(frozen=True)
class TargetAccess:
    engine: str  # "mysql" | "postgresql"
    host: str
    port: int
    database: str
    user: str
    password: str = field(default="", repr=False)
    tls: TLSSettings = TLSSettings()

    @classmethod
    def of(cls, target, password=None):
        """The target's stored description (the password and client key decrypted), or with another password."""
        return cls(target.engine, target.host, int(target.port), target.database, target.user,
                   target.password if password is None else password,
                   TLSSettings(target.tls_mode or "disable", target.tls_ca, target.tls_cert, target.tls_key))

    @property
    def secrets(self):
        """What must never be shown: masked in every log line, reason and command line."""
        return [s for s in (self.password, self.tls.key_pem) if s]

    def clean(self, text):
        return redact(text, self.secrets)

    def describe(self):
        """'db.example:3306' / '[fd00::5]:5432'."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    # --- the tools -------------------------------------------------------------------------------------
    def tool_setup(self, driver, workdir):
        """The tool's connection, environment and files for this target; raises Unsupported when the tool
        cannot do the TLS mode."""
        conn = Connection(self.engine, self.host, self.port, self.database, self.user, self.tls.mode)
        why = driver.tls_refusal(conn, self.tls)
        if why:
            raise Unsupported(why)
        pipe_files = {str(Path(workdir) / name): content for name, content in driver.secret_files(conn, self.password).items()}
        env = {**driver.secret_env(conn, self.password), **driver.tls_env(conn, self.tls, workdir)}
        disk_files = {str(Path(workdir) / name): content for name, content in driver.tls_files(conn, self.tls).items()}
        return ToolSetup(conn, env, pipe_files, disk_files)

    # --- the dashboard's own connections -------------------------------------------------------------------
    @contextmanager
    def _material(self):
        """The TLS files in a private temporary directory, removed as soon as the connection is made."""
        files = self.tls.files()
        if not files:
            yield {}
            return
        directory = tempfile.mkdtemp(prefix=TLS_DIR_PREFIX)  # a killed process's: removed by the next worker start
        try:
            paths = {}
            for name, content in files.items():
                path = os.path.join(directory, name)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as fh:
                    fh.write(content)
                paths[name] = path
            yield paths
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def _mysql_ssl(self, paths):
        if not self.tls.on:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = self.tls.mode == "verify-full"
        if self.tls.mode in ("verify-ca", "verify-full"):
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(cadata=self.tls.ca_pem)
        else:
            context.verify_mode = ssl.CERT_NONE
        if CERT_FILE in paths and KEY_FILE in paths:
            context.load_cert_chain(paths[CERT_FILE], paths[KEY_FILE])
        return context

    def connect(self, application_name="perfdash", autocommit=True, statement_timeout=True, timeout_s=TIMEOUT_S):
        """A DB-API connection (pymysql or psycopg) with the target's TLS settings. Raises ConnectionFailed
        with the driver's reason (secrets masked) and, for a TLS failure, what it means."""
        try:
            with self._material() as paths:
                if self.engine == "mysql":
                    context = self._mysql_ssl(paths)
                    return pymysql.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                                           database=self.database, connect_timeout=timeout_s,
                                           read_timeout=timeout_s if statement_timeout else None,
                                           autocommit=autocommit, program_name=application_name,
                                           ssl=context, ssl_disabled=context is None)
                options = {"sslmode": self.tls.mode}
                if CA_FILE in paths:
                    options["sslrootcert"] = paths[CA_FILE]
                if CERT_FILE in paths and KEY_FILE in paths:
                    options.update(sslcert=paths[CERT_FILE], sslkey=paths[KEY_FILE])
                return psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password or None,
                                       dbname=self.database, connect_timeout=timeout_s, autocommit=autocommit,
                                       application_name=application_name,
                                       options=f"-c statement_timeout={timeout_s * 1000}" if statement_timeout else None,
                                       **options)
        except (pymysql.MySQLError, psycopg.Error, OSError, ssl.SSLError, ValueError) as exc:
            message = self.clean(str(exc)).strip() or exc.__class__.__name__
            raise ConnectionFailed(self.explain(message)) from None

    def explain(self, message):
        """The driver's words, with what a TLS failure means for this target."""
        hints = []
        lower = message.lower()
        if "does not match host name" in lower or "mismatch" in lower or "hostname" in lower and "match" in lower:
            hints.append(f"TLS: the server's certificate does not name the host \"{self.host}\" (verify-full checks the "
                         "host name: connect by the name the certificate gives)")
        elif "certificate verify failed" in lower or "self-signed certificate" in lower or "unable to get local issuer" in lower:
            hints.append("TLS: the server's certificate is not signed by the target's CA certificate")
        # Only a refused login is worth a second try (an unreachable host would cost another timeout).
        if not self.tls.on and ("no encryption" in lower or ("1045" in lower and self._requires_tls())):
            hints.append("TLS: the server accepts TLS connections only, and this target's TLS mode is disable")
        return message + "".join(f" [{hint}]" for hint in hints)

    def _requires_tls(self):
        """For a refused plaintext login to MySQL/MariaDB (which says only 'Access denied' when
        require_secure_transport is on): is the same login accepted over TLS?"""
        if self.engine != "mysql":
            return False
        try:
            replace(self, tls=replace(self.tls, mode="require")).connect().close()
            return True
        except ConnectionFailed:
            return False

    @contextmanager
    def session(self, **kwargs):
        conn = self.connect(**kwargs)
        try:
            yield conn
        finally:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - closing a broken connection
                pass

    def server_version(self):
        """The server's version string, e.g. '10.11.19-MariaDB-0+deb12u1' or 'PostgreSQL 15.20 ...'."""
        try:
            with self.session() as conn:
                version = query_one(conn, "SELECT VERSION()" if self.engine == "mysql" else "SELECT version()")
        except (pymysql.MySQLError, psycopg.Error, OSError) as exc:
            raise ConnectionFailed(self.clean(str(exc)) or exc.__class__.__name__) from None
        return version if self.engine == "postgresql" or "mariadb" in version.lower() else f"MySQL {version}"

    def check(self):
        """'Test connection': the server version and the connection's own TLS, as the server reports it."""
        try:
            with self.session() as conn:
                version = query_one(conn, "SELECT VERSION()" if self.engine == "mysql" else "SELECT version()")
                own = own_tls(conn, self.engine)
        except (pymysql.MySQLError, psycopg.Error, OSError) as exc:
            raise ConnectionFailed(self.clean(str(exc)) or exc.__class__.__name__) from None
        if self.engine == "mysql" and "mariadb" not in version.lower():
            version = f"MySQL {version}"
        return {"version": version, "tls": own, "mode": self.tls.mode,
                "verified": {"disable": "", "require": "", "verify-ca": "chain", "verify-full": "chain and host name"}[self.tls.mode]}

    def unanswered(self, timeout_s):
        """Whether a new connection's trivial query is answered within timeout_s: "" if it is, else what happened
        ("got no answer within 3 s", "failed: <the driver's words>"). libpq has no read timeout of its own, so the
        attempt runs in a thread of its own and is abandoned (a daemon) if it outlives the limit."""
        outcome = {}

        def attempt():
            try:
                with self.session(application_name="perfdash-liveness", timeout_s=timeout_s) as conn:
                    query_one(conn, "SELECT 1")
                outcome["why"] = ""
            except ConnectionFailed as exc:
                outcome["why"] = f"failed: {exc}"
            except (pymysql.MySQLError, psycopg.Error, OSError) as exc:
                outcome["why"] = f"failed: {self.clean(str(exc)).strip() or exc.__class__.__name__}"

        thread = threading.Thread(target=attempt, name="perfdash-liveness", daemon=True)
        thread.start()
        thread.join(timeout_s + 0.5)
        why = outcome.get("why")
        if why is None or "timeout expired" in why or "timed out" in why:
            return f"got no answer within {timeout_s:g} s"
        return why

    def bounded(self, call, timeout_s=BOUND_S):
        """call() in a thread of its own, given up after timeout_s with ConnectionFailed ("got no answer within 10 s"):
        libpq has no read timeout, so a server frozen (SIGSTOP) or cut off after the connection was made would hold
        the caller as long as TCP waits. The abandoned thread is a daemon; its connection goes with the process."""
        outcome = {}

        def attempt():
            try:
                outcome["value"] = call()
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                outcome["error"] = exc

        thread = threading.Thread(target=attempt, name="perfdash-bounded", daemon=True)
        thread.start()
        thread.join(timeout_s)
        if thread.is_alive():
            raise ConnectionFailed(f"{self.describe()} got no answer within {timeout_s:g} s")
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    def round_trip(self, queries=ROUND_TRIP_QUERIES):
        """The client-to-target round trip: the median of `queries` trivial queries on one connection, in ms."""
        with self.session() as conn:
            query_one(conn, "SELECT 1")  # the first may pay for a plan or a cold path
            times = []
            for _ in range(queries):
                start = time.perf_counter()
                query_one(conn, "SELECT 1")
                times.append((time.perf_counter() - start) * 1000)
        return {"median_ms": round(statistics.median(times), 3), "min_ms": round(min(times), 3),
                "max_ms": round(max(times), 3), "queries": queries}


def query_one(conn, sql, args=None):
    if isinstance(conn, pymysql.connections.Connection):
        with conn.cursor() as cur:
            cur.execute(sql, args)
            row = cur.fetchone()
    else:
        row = conn.execute(sql, args).fetchone()
    return row[0] if row else None


def execute(conn, sql, args=None):
    """A statement without rows (DDL)."""
    if isinstance(conn, pymysql.connections.Connection):
        with conn.cursor() as cur:
            cur.execute(sql, args)
    else:
        conn.execute(sql, args)


def query_all(conn, sql, args=None):
    if isinstance(conn, pymysql.connections.Connection):
        with conn.cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())
    return conn.execute(sql, args).fetchall()


def own_tls(conn, engine):
    """This connection's TLS as the server sees it: {"version", "cipher"} (empty strings: none)."""
    if engine == "mysql":
        found = dict(query_all(conn, "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')"))
        return {"version": found.get("Ssl_version", ""), "cipher": found.get("Ssl_cipher", "")}
    row = query_all(conn, "SELECT ssl, version, cipher FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
    if not row or not row[0][0]:
        return {"version": "", "cipher": ""}
    return {"version": row[0][1] or "", "cipher": row[0][2] or ""}


def tool_sessions_tls(conn, engine, user, database, exclude_names=()):
    """The server's view of the TLS of the other sessions of this user on this database (the tool's):
    {"source", "sessions", "encrypted", "versions", "ciphers"}, or {"source", "unavailable": why}."""
    if engine == "postgresql":
        rows = query_all(conn, "SELECT s.ssl, s.version, s.cipher FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) "
                               "WHERE a.usename = %s AND a.datname = %s AND a.pid <> pg_backend_pid() "
                               "AND a.backend_type = 'client backend' AND NOT (a.application_name = ANY(%s))",
                         [user, database, list(exclude_names)])
        source = "pg_stat_ssl"
    else:
        try:
            rows = query_all(conn, "SELECT MAX(CASE WHEN s.VARIABLE_NAME = 'Ssl_version' THEN s.VARIABLE_VALUE END) <> '', "
                                   "MAX(CASE WHEN s.VARIABLE_NAME = 'Ssl_version' THEN s.VARIABLE_VALUE END), "
                                   "MAX(CASE WHEN s.VARIABLE_NAME = 'Ssl_cipher' THEN s.VARIABLE_VALUE END) "
                                   "FROM performance_schema.status_by_thread s JOIN performance_schema.threads t USING (THREAD_ID) "
                                   "WHERE s.VARIABLE_NAME IN ('Ssl_version', 'Ssl_cipher') AND t.PROCESSLIST_USER = %s "
                                   "AND t.PROCESSLIST_DB = %s AND t.PROCESSLIST_ID <> CONNECTION_ID() GROUP BY t.THREAD_ID",
                             [user, database])
        except pymysql.MySQLError as exc:
            secure = dict(query_all(conn, "SHOW GLOBAL VARIABLES WHERE Variable_name = 'require_secure_transport'"))
            return {"source": "require_secure_transport", "unavailable": f"performance_schema: {exc.args[-1]}",
                    "server_requires_tls": secure.get("require_secure_transport") == "ON"}
        source = "performance_schema.status_by_thread"
        if not rows:  # performance_schema off (MariaDB's default): the server's rule is the evidence left
            secure = dict(query_all(conn, "SHOW GLOBAL VARIABLES WHERE Variable_name = 'require_secure_transport'"))
            return {"source": "require_secure_transport", "unavailable": "performance_schema lists no session of the tool",
                    "server_requires_tls": secure.get("require_secure_transport") == "ON"}
    return {"source": source, "sessions": len(rows), "encrypted": sum(1 for r in rows if r[0]),
            "versions": sorted({r[1] for r in rows if r[0] and r[1]}), "ciphers": sorted({r[2] for r in rows if r[0] and r[2]})}


def short_version(engine, version):
    """'10.11.19-MariaDB-0+deb12u1' -> 'MariaDB 10.11'; 'PostgreSQL 15.20 (Debian…)' -> '15'; 'MySQL 8.0.36' -> '8.0'."""
    if engine == "postgresql":
        match = re.search(r"PostgreSQL (\d+)(?:\.(\d+))?", version)
        if not match:
            return ""
        return match.group(1) if int(match.group(1)) >= 10 else f"{match.group(1)}.{match.group(2)}"
    match = re.search(r"(\d+)\.(\d+)", version)
    if not match:
        return ""
    short = f"{match.group(1)}.{match.group(2)}"
    return f"MariaDB {short}" if "mariadb" in version.lower() else short
