"""The dashboard's own gunicorn command (config.gunicorn_conf) on the test database, for tests of what only a
real server shows (its request-line limit, one rate-limit count across processes)."""

import os
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import requests
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(**overrides):
    """The environment of a production-shaped server (DEBUG off) on the test database; an override of None
    removes the variable."""
    db = connection.settings_dict
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "0", "ALLOWED_HOSTS": "127.0.0.1",
           "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"}
    env.update(overrides)
    return {name: value for name, value in env.items() if value is not None}


@contextmanager
def gunicorn(env, log_path, ready_path="/accounts/login/"):
    """One gunicorn process with one worker on a free port; yields its URL once `ready_path` answers (polled:
    the machine is shared, no fixed sleep). A page by default, so no API rate-limit count is spent."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "w") as log:
        process = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "-c", "python:config.gunicorn_conf",
                                    "config.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "1",
                                    "--no-control-socket"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            for _ in range(600):
                try:
                    requests.get(f"{url}{ready_path}", timeout=30)
                    break
                except (requests.ConnectionError, requests.Timeout):  # not listening yet, or its first answer is slow
                    assert process.poll() is None, Path(log_path).read_text()
                    subprocess.run(["sleep", "0.1"])
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)
