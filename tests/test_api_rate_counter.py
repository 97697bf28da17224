"""The rate limit's count on the embedded default (issue 52.14): config/rate_counter.py, a SQLite file shared by the
server's processes. One atomic statement a request: processes counting the same client at the same time get every
count once (the database cache table's add/get/incr could hand two requests the same count). No database needed."""

import multiprocessing
import os

import pytest

from config.rate_counter import SQLiteCounter, counter

PROCESSES, HITS = 4, 250


def _count_many(path, queue):
    mine = SQLiteCounter(path)  # a process's own connection, as each gunicorn worker opens
    counted = [mine.hit("api-rate:anon:1000000/minute:addr:10.0.0.1", 60) for _ in range(HITS)]
    queue.put([c[1] if c else "not counted" for c in counted])


def test_processes_counting_one_client_at_once_get_every_count_exactly_once(tmp_path):
    path = str(tmp_path / "db.sqlite3-rate-limit")
    SQLiteCounter(path).hit("warm", 60)  # the file and its table exist before the race
    context = multiprocessing.get_context("spawn")  # not fork: the test process has threads (xdist, Django)
    queue = context.Queue()
    workers = [context.Process(target=_count_many, args=(path, queue)) for _ in range(PROCESSES)]
    for worker in workers:
        worker.start()
    counts = [count for _ in workers for count in queue.get(timeout=120)]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert sorted(counts) == list(range(1, PROCESSES * HITS + 1))  # none twice, none lost


def test_a_window_starts_at_the_first_request_and_a_new_one_after_it_ends(tmp_path):
    counted = SQLiteCounter(str(tmp_path / "counts"))
    assert counted.hit("a", 60, now=1000.0) == (1000.0, 1)
    assert counted.hit("a", 60, now=1030.0) == (1000.0, 2)
    assert counted.hit("b", 60, now=1030.0) == (1030.0, 1)  # another client, its own window
    assert counted.hit("a", 60, now=1060.0) == (1060.0, 1)  # the window ended at 1060: a new one, counted afresh
    assert counted.hit("a", 60, now=1061.0) == (1060.0, 2)


def test_ended_windows_are_dropped_now_and_then(tmp_path, monkeypatch):
    import sqlite3

    path = str(tmp_path / "counts")
    counted = SQLiteCounter(path)
    for client in range(50):
        counted.hit(f"client-{client}", 60, now=1000.0)
    counted.hit("later", 60, now=1000.0 + 3600)  # an hour on: the purge (at most once a minute) runs
    rows = sqlite3.connect(path).execute("SELECT key FROM counts").fetchall()
    assert rows == [("later",)]


def test_a_file_that_cannot_be_written_serves_uncounted(tmp_path):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    assert SQLiteCounter(str(blocked / "counts")).hit("a", 60) is None


def test_one_counter_per_file_and_process(tmp_path):
    path = str(tmp_path / "counts")
    assert counter(path) is counter(path)
    assert counter(path)._connection() is counter(path)._connection()
    pid = os.getpid()
    counter(path)._local.pid = pid + 1  # as a forked child sees it: a connection of its own
    first = counter(path)._local.connection
    assert counter(path)._connection() is not first


@pytest.mark.django_db
def test_the_embedded_default_counts_in_its_file(tmp_path, settings, client):
    """The throttle, configured as on the embedded default (API_RATE_LIMIT_FILE), counts in the file: the headers'
    Remaining is the file's count."""
    settings.API_RATE_LIMIT_FILE = str(tmp_path / "db.sqlite3-rate-limit")
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": "3/minute"}}
    seen = [(r.status_code, r["X-RateLimit-Remaining"]) for r in (client.get("/api/v1/vendors/") for _ in range(4))]
    assert seen == [(200, "2"), (200, "1"), (200, "0"), (429, "0")]
    assert counter(settings.API_RATE_LIMIT_FILE).hit("api-rate:anon:3/minute:addr:127.0.0.1", 60)[1] == 5
