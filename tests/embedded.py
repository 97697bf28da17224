"""The embedded default (no configuration: SQLite under a temporary directory), migrated and loaded with
the bundled catalogue in a subprocess, and asked over HTTP through Django's test client in another: what
the hostile-request tests send to PostgreSQL in-process, they send here too."""

import json
import os
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


class EmbeddedSQLite:
    def __init__(self, directory):
        self.env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "config.settings",
                    "DATABASE_URL": f"sqlite:///{Path(directory) / 'db.sqlite3'}",
                    # the hostile requests come from one address: the rate limit is not what is tested
                    "API_ANON_RATE": "100000/minute", "API_AUTHENTICATED_RATE": "100000/minute"}
        for command in (["migrate", "--noinput", "-v0"], ["import_whitepapers"]):
            self.manage(*command)

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
