"""The embedded default (no configuration: SQLite under a temporary directory), migrated and loaded with
the bundled catalogue in a subprocess, and asked over HTTP through Django's test client in another: what
the hostile-request tests send to PostgreSQL in-process, they send here too."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run inside the subprocess: each (who, method, url, body, content type) asked, anonymously or as a staff
# user; prints [[status, body text], ...] as JSON.
ASK = r"""
import json, sys
import django
django.setup()
from django.contrib.auth.models import User
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
staff = User.objects.get_or_create(username="embedded-staff", defaults={"is_staff": True, "is_superuser": True})[0]
clients = {"anonymous": Client(raise_request_exception=False), "staff": Client(raise_request_exception=False)}
clients["staff"].force_login(staff)
answers = []
for who, method, url, body, content_type in json.load(sys.stdin):
    client = clients[who]
    kwargs = {}
    if method == "get":
        response = client.get(url, **kwargs)
    else:
        response = getattr(client, method)(url, data=body, content_type=content_type, **kwargs)
    content = b"".join(response.streaming_content) if response.streaming else response.content
    answers.append([response.status_code, content.decode("utf-8", "replace")])
print(json.dumps(answers))
"""


def migrated_sqlite(directory):
    """An empty SQLite database with every migration applied (`manage.py migrate` in a subprocess, about 20 s on two
    cores): made once per session process, copied by the tests that need a fresh database (copy_of)."""
    path = Path(directory) / "migrated.sqlite3"
    EmbeddedSQLite(directory, path=path, fresh=True)
    return path


def copy_of(template, directory):
    """A database of the test's own: the migrated template copied (the subprocess that migrated it has ended)."""
    path = Path(directory) / "db.sqlite3"
    shutil.copyfile(template, path)
    return path


class EmbeddedSQLite:
    """The dashboard with no configuration, on the SQLite file `path`: `fresh` runs every migration on it (else
    it is a copy of migrated_sqlite's); `catalogue` imports the bundled catalogue."""

    def __init__(self, directory, path=None, fresh=False, catalogue=False):
        path = path or Path(directory) / "db.sqlite3"
        self.env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "config.settings",
                    "DATABASE_URL": f"sqlite:///{path}",
                    # the hostile requests come from one address: the rate limit is not what is tested
                    "API_ANON_RATE": "100000/minute", "API_AUTHENTICATED_RATE": "100000/minute"}
        if fresh:
            self.manage("migrate", "--noinput", "-v0")
        if catalogue:
            self.manage("import_whitepapers")

    def manage(self, *command):
        """A management command's output (it must succeed)."""
        return self._run([sys.executable, "manage.py", *command])

    def _run(self, argv, stdin=None):
        proc = subprocess.run(argv, cwd=ROOT, env=self.env, input=stdin, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
        return proc.stdout

    def ask(self, requests):
        """[(status, body text)] for each (who, method, url[, body, content type]); who: anonymous or staff."""
        requests = [(*r, None, None)[:5] if len(r) == 3 else r for r in requests]
        return [tuple(a) for a in json.loads(self._run([sys.executable, "-c", ASK], json.dumps(requests)).splitlines()[-1])]
