"""'Test connection': connect to a target with its stored password and read the server version."""

import psycopg
import pymysql

from .drivers import redact

TIMEOUT_S = 5


class ConnectionFailed(Exception):
    pass


def server_version(target, password=None):
    """The server's version string, e.g. '10.11.19-MariaDB-0+deb12u1' or 'PostgreSQL 15.20 ...'.
    Raises ConnectionFailed with the driver's message (never containing the password)."""
    password = target.password if password is None else password
    try:
        if target.engine == "mysql":
            conn = pymysql.connect(host=target.host, port=target.port, user=target.user, password=password,
                                   database=target.database, connect_timeout=TIMEOUT_S, read_timeout=TIMEOUT_S)
            try:
                with conn.cursor() as cur:
                    cur.execute("SELECT VERSION()")
                    version = cur.fetchone()[0]
            finally:
                conn.close()
            return version if "mariadb" in version.lower() else f"MySQL {version}"
        with psycopg.connect(host=target.host, port=target.port, user=target.user, password=password or None,
                             dbname=target.database, connect_timeout=TIMEOUT_S) as conn:
            return conn.execute("SELECT version()").fetchone()[0]
    except (pymysql.MySQLError, psycopg.Error, OSError) as exc:
        message = redact(str(exc), [password])
        raise ConnectionFailed(message.strip() or exc.__class__.__name__) from None


def short_version(engine, version):
    """'10.11.19-MariaDB-0+deb12u1' -> 'MariaDB 10.11'; 'PostgreSQL 15.20 (Debian…)' -> '15'; 'MySQL 8.0.36' -> '8.0'."""
    import re

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
