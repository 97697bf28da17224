"""The rate limit's count on the embedded default (SQLite, no Redis): one small SQLite file of its own beside the
database (API_RATE_LIMIT_FILE), in WAL mode, shared by every process of the host, counted by one atomic statement.

Before (issue 52.14), the count lived in Django's database cache table inside the catalogue's own SQLite file: four
cache calls a request (add, get, add, incr; each `add` also counts the table's rows to cull it), each a transaction
of the main database with its journal synced to disk, and every process's writes queued on that one file's lock.
That was 2.2 ms of CPU and most of the 250 ms p50 of every anonymous API answer (benchmarks/api_answers.out.txt).

Here a request is one statement, `INSERT ... ON CONFLICT DO UPDATE ... RETURNING`: SQLite runs it as one write
transaction under the file's write lock, so two processes at the same instant get two successive counts (never the
same one: the old incr read and wrote in two steps). WAL lets readers and the writer run together, and the file is
not synced on each commit (synchronous=OFF): a count is worth a minute or an hour, and a machine that loses power
loses at most the last counts, never the file's consistency (WAL). A SQLite error (a full disk, a lock held past
the busy timeout) serves the request uncounted, as the cache-backed count does while Redis is down.

Where REDIS_URL is set the count stays in Redis (the default cache); on PostgreSQL without Redis, in the database's
cache table (config/throttling.py): both are shared by processes on other hosts too, which a file is not. SQLite
is one host's database, so its file is shared by exactly the processes that can serve it."""

import os
import sqlite3
import threading
import time

SCHEMA = ("CREATE TABLE IF NOT EXISTS counts (key TEXT PRIMARY KEY, start REAL NOT NULL, expires REAL NOT NULL, "
          "count INTEGER NOT NULL) WITHOUT ROWID")
# A new window when the stored one has ended: the count restarts at 1 and the window at now. SQLite evaluates every
# SET expression with the row's old values.
# Named parameters, given as a mapping (numbered ones given a sequence are an error from Python 3.14 on).
COUNT = ("INSERT INTO counts (key, start, expires, count) VALUES (:key, :now, :now + :period, 1) "
         "ON CONFLICT (key) DO UPDATE SET "
         "count = CASE WHEN expires <= :now THEN 1 ELSE count + 1 END, "
         "start = CASE WHEN expires <= :now THEN :now ELSE start END, "
         "expires = CASE WHEN expires <= :now THEN :now + :period ELSE expires END "
         "RETURNING start, count")
PURGE_EVERY = 60.0  # seconds: each process drops ended windows at most this often (the file stays small)


class SQLiteCounter:
    def __init__(self, path, busy_timeout_s=5.0):
        self.path = str(path)
        self.busy_timeout_s = busy_timeout_s
        self._local = threading.local()  # a connection per thread (the dev server and tests have several)

    def _connection(self):
        local = self._local
        if getattr(local, "pid", None) != os.getpid():  # a forked worker never uses its parent's connection
            local.connection = self._connect()
            local.pid, local.purged = os.getpid(), float("-inf")  # its first count drops ended windows
        return local.connection

    def _connect(self):
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None,
                                     check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=OFF")
        connection.execute(SCHEMA)
        return connection

    def hit(self, key, period, now=None):
        """Count one request of `key` in its window of `period` seconds: (window start, count so far), or None when
        the file cannot be written (the request is then not counted)."""
        now = time.time() if now is None else now
        try:
            connection = self._connection()
            start, count = connection.execute(COUNT, {"key": key, "now": now, "period": period}).fetchall()[0]
            if now - self._local.purged >= PURGE_EVERY:
                self._local.purged = now
                connection.execute("DELETE FROM counts WHERE expires <= ?", (now,))
        except (sqlite3.Error, OSError):  # OSError: its directory cannot be made
            self._local.pid = None  # reconnect next time (the file may have been removed or replaced)
            return None
        return start, count

    def clear(self):
        self._connection().execute("DELETE FROM counts")


_counters = {}
_counters_lock = threading.Lock()


def counter(path):
    """The process's counter of the file at `path` (one connection per thread)."""
    with _counters_lock:
        if path not in _counters:
            _counters[path] = SQLiteCounter(path)
        return _counters[path]
