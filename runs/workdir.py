"""A run's private work directory on the worker: made 0700 for the run, locked while the run executes, and
removed when it ends. SIGKILL never reaches the removal, so a worker starting later removes the directories
whose lock is free (their process is gone). TLS material a tool reads from its working directory is written
here (0600) and removed after the last step; secrets with the password never are (runs/runner.py's pipes)."""

import fcntl
import os
import re
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

WORKDIR_PREFIX = "perfdash-run"
LOCK_NAME = ".lock"


@contextmanager
def run_workdir(run_id):
    """The directory of one worker's part of run `run_id`, held (locked) until the block ends, then removed."""
    path = tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{int(run_id)}-")  # 0700, private to the worker
    lock = os.open(Path(path) / LOCK_NAME, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(lock)


def write_private_files(files):
    """{path: content} written 0600 (never over an existing file). Returns the paths, for remove_files."""
    for path, content in files.items():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(content)
    return list(files)


def remove_files(paths):
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


# The dashboard's own TLS connections write their files into perfdash-tls-* for the moment of connecting
# (runs/access.py); one older than this outlived the process that was connecting.
TLS_DIR_PREFIX = "perfdash-tls-"
TLS_DIR_STALE_S = 60


def remove_stale_workdirs(tmpdir=None):
    """Work directories of runs whose process is gone (its lock is free), and TLS directories of connections made
    long ago: removed. Returns their paths."""
    removed = []
    root = Path(tmpdir or tempfile.gettempdir())
    for path in root.glob(f"{TLS_DIR_PREFIX}*"):
        try:
            if path.is_dir() and time.time() - path.stat().st_mtime > TLS_DIR_STALE_S:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(str(path))
        except OSError:
            continue
    for path in root.glob(f"{WORKDIR_PREFIX}*-*"):
        if not path.is_dir() or not re.fullmatch(rf"{WORKDIR_PREFIX}\d+-.+", path.name):
            continue
        try:
            fd = os.open(path / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = None  # made by an older version, or between mkdtemp and the lock: only if not recent
            if time.time() - path.stat().st_mtime < 60:
                continue
        except OSError:
            continue
        try:
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live run
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
        finally:
            if fd is not None:
                os.close(fd)
    return removed


def remove_dead_run_workdirs(run_id, wait_s=5.0):
    """Before a dead run is failed on this host: its work directories removed (with every stale one). A process killed
    a moment ago may still be closing its files, its lock among them (the kernel frees the memory first, so it already
    reads as dead): its directory is waited for, up to wait_s, so a failed run never leaves its TLS key behind."""
    deadline = time.monotonic() + wait_s
    while True:
        remove_stale_workdirs()
        if not any(Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}{int(run_id)}-*")) or time.monotonic() >= deadline:
            return
        time.sleep(0.1)
