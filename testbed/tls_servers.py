"""MariaDB and PostgreSQL instances of the test session's own, that accept TLS connections only, with a CA,
a server certificate naming `localhost` and a client certificate made by openssl at test time.

Each has its own data directory under a temporary directory and its own port, a free one the system picks
unless given (so a benchmark's servers and the suite's never collide); only the processes started here are
ever stopped. Usable by hand as well:
`.venv/bin/python -m testbed.tls_servers /tmp/tls` starts both and waits."""

import os
import shutil
import tempfile
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pymysql

from .runs_support import mysql_grants, postgresql_grants

PG_BIN = Path("/usr/lib/postgresql/15/bin")
USER = "perfdash_tls"
PASSWORD = "Tls-s3cr3t,#pw"
DATABASE = "perfdash_tls"
SERVER_NAME = "localhost"


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now (the system's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run(argv, **kwargs):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kwargs)


def make_ca(directory, name):
    """A CA key and self-signed certificate: (key path, cert path)."""
    key, cert = directory / f"{name}.key", directory / f"{name}.crt"
    _run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
          "-keyout", str(key), "-out", str(cert)])
    return key, cert


def make_signed(directory, name, common_name, ca_key, ca_cert, san=None):
    """A key and a certificate signed by the CA (with a subjectAltName when given)."""
    key, csr, cert = directory / f"{name}.key", directory / f"{name}.csr", directory / f"{name}.crt"
    _run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={common_name}", "-keyout", str(key), "-out", str(csr)])
    argv = ["openssl", "x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key), "-CAcreateserial",
            "-days", "2", "-out", str(cert)]
    if san:
        ext = directory / f"{name}.ext"
        ext.write_text(f"subjectAltName={san}\n")
        argv += ["-extfile", str(ext)]
    _run(argv)
    return key, cert



@contextmanager
def running_servers(prefix):
    """Both servers in a directory of their own, stopped and removed afterwards. Not under pytest's temporary
    directory: that one is private to root, and PostgreSQL runs as postgres."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    started = TLSServers(root).start()
    try:
        yield started
    finally:
        started.stop()
        shutil.rmtree(root, ignore_errors=True)

# Both servers take as many connections as the fixtures need and no more: a test may exhaust them (it is its own server).
MAX_CONNECTIONS = 60


@dataclass
class TLSServers:
    root: Path
    mariadb_port: int = 0  # 0: a free port, picked at start
    pg_port: int = 0
    ca_pem: str = ""
    other_ca_pem: str = ""
    client_cert_pem: str = ""
    client_key_pem: str = ""
    procs: dict = field(default_factory=dict)

    # --- certificates ---------------------------------------------------------------------------------
    def make_certificates(self):
        certs = self.root / "certs"
        certs.mkdir(parents=True, exist_ok=True)
        ca_key, ca_cert = make_ca(certs, "perfdash-test-ca")
        _other_key, other_cert = make_ca(certs, "another-ca")
        self.server_key, self.server_cert = make_signed(certs, "server", SERVER_NAME, ca_key, ca_cert, san=f"DNS:{SERVER_NAME}")
        client_key, client_cert = make_signed(certs, "client", USER, ca_key, ca_cert)
        self.ca_file = ca_cert
        self.ca_pem, self.other_ca_pem = ca_cert.read_text(), other_cert.read_text()
        self.client_cert_pem, self.client_key_pem = client_cert.read_text(), client_key.read_text()
        for path in certs.iterdir():
            os.chmod(path, 0o644)
        os.chmod(certs, 0o755)
        shutil.chown(self.server_key, "postgres")
        os.chmod(self.server_key, 0o600)

    # --- MariaDB ----------------------------------------------------------------------------------------
    def start_mariadb(self):
        data, run = self.root / "mariadb", self.root / "mariadb-run"
        data.mkdir(parents=True, exist_ok=True)
        run.mkdir(parents=True, exist_ok=True)
        self.mariadb_socket = run / "mysqld.sock"
        key_copy = run / "server.key"
        shutil.copy(self.server_key, key_copy)
        os.chmod(key_copy, 0o600)
        if not (data / "mysql").exists():  # started again after a test stopped it: the same data
            _run(["mariadb-install-db", "--no-defaults", "--user=root", f"--datadir={data}", "--auth-root-authentication-method=normal",
                  "--skip-test-db"])
        log = open(self.root / "mariadb.log", "w")
        self.procs["mariadb"] = subprocess.Popen(
            ["mariadbd", "--no-defaults", "--user=root", f"--datadir={data}", f"--port={self.mariadb_port}", "--bind-address=127.0.0.1",
             f"--socket={self.mariadb_socket}", f"--pid-file={run / 'mysqld.pid'}", "--skip-name-resolve",
             "--require-secure-transport=ON", f"--ssl-ca={self.ca_file}", f"--ssl-cert={self.server_cert}", f"--ssl-key={key_copy}",
             "--performance-schema=ON", "--innodb-buffer-pool-size=64M", "--skip-log-bin", f"--max-connections={MAX_CONNECTIONS}"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = pymysql.connect(unix_socket=str(self.mariadb_socket), user="root", password="")
                break
            except pymysql.MySQLError:
                if self.procs["mariadb"].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("MariaDB did not start:\n" + (self.root / "mariadb.log").read_text())
                time.sleep(0.2)
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
            for host in ("127.0.0.1", "localhost", "%"):
                # TLS is required by the server (require_secure_transport), not per user: as managed databases do.
                cur.execute(f"CREATE USER IF NOT EXISTS '{USER}'@'{host}' IDENTIFIED BY {conn.escape(PASSWORD)}")
                # the least a run needs (docs/runs.md), performance_schema included: the server's view of the tool's
                # sessions' TLS (performance_schema.status_by_thread)
                for statement in mysql_grants(DATABASE, f"'{USER}'@'{host}'"):
                    cur.execute(statement)
        conn.close()

    def stop_mariadb(self):
        self._stop("mariadb")

    # --- PostgreSQL -------------------------------------------------------------------------------------
    def _as_postgres(self, argv, **kwargs):
        return _run(["runuser", "-u", "postgres", "--", *argv], **kwargs)

    def start_postgresql(self):
        data = self.root / "pgdata"
        os.chmod(self.root, 0o755)
        if not data.exists():
            data.mkdir()
            shutil.chown(data, "postgres")
            self._as_postgres([str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"])
            hba = data / "pg_hba.conf"
            # TLS only: local (socket) for the fixture itself, hostssl with a password for everyone else.
            hba.write_text("local all postgres trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n"
                           "hostssl all all ::1/128 scram-sha-256\nhostssl all all 0.0.0.0/0 scram-sha-256\n")
        self.pg_socket_dir = self.root / "pg-run"
        self.pg_socket_dir.mkdir(exist_ok=True)
        shutil.chown(self.pg_socket_dir, "postgres")
        log = open(self.root / "postgresql.log", "w")
        self.procs["postgresql"] = subprocess.Popen(
            ["runuser", "-u", "postgres", "--", str(PG_BIN / "postgres"), "-D", str(data), "-p", str(self.pg_port),
             "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.pg_socket_dir}", "-c", "ssl=on",
             "-c", f"ssl_cert_file={self.server_cert}", "-c", f"ssl_key_file={self.server_key}", "-c", f"ssl_ca_file={self.ca_file}",
             "-c", "shared_buffers=32MB", "-c", "fsync=off", "-c", f"max_connections={MAX_CONNECTIONS}"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = psycopg.connect(host=str(self.pg_socket_dir), port=self.pg_port, user="postgres", dbname="postgres", autocommit=True)
                break
            except psycopg.Error:
                if self.procs["postgresql"].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("PostgreSQL did not start:\n" + (self.root / "postgresql.log").read_text())
                time.sleep(0.2)
        with conn:
            if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [USER]).fetchone():
                conn.execute(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'")
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone():
                conn.execute(f"CREATE DATABASE {DATABASE}")
            server_wide, in_database = postgresql_grants(DATABASE, USER)  # the least a run needs (docs/runs.md)
            for statement in server_wide:
                conn.execute(statement)
        with psycopg.connect(host=str(self.pg_socket_dir), port=self.pg_port, user="postgres", dbname=DATABASE,
                             autocommit=True) as conn:
            for statement in in_database:
                conn.execute(statement)

    def stop_postgresql(self):
        self._stop("postgresql")

    def _stop(self, name):
        proc = self.procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        # PostgreSQL: SIGINT is the fast shutdown (SIGTERM would wait for its clients to leave).
        os.killpg(proc.pid, signal.SIGINT if name == "postgresql" else signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def start(self):
        self.mariadb_port = self.mariadb_port or free_port()
        self.pg_port = self.pg_port or free_port()
        try:
            self.make_certificates()
            self.start_mariadb()
            self.start_postgresql()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        for name in list(self.procs):
            self._stop(name)


if __name__ == "__main__":
    import sys

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop the servers on kill, too
    servers = TLSServers(Path(sys.argv[1])).start()
    print("MariaDB on", servers.mariadb_port, "PostgreSQL on", servers.pg_port, "certificates in", servers.root / "certs", flush=True)
    try:
        signal.pause()
    finally:
        servers.stop()
