import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_production_settings_pass_check_deploy_without_warnings(db):
    from django.db import connection

    database = connection.settings_dict
    env = {
        "PATH": os.environ["PATH"],
        "DJANGO_PRODUCTION": "1",
        "SECRET_KEY": "x" * 20 + "a-long-random-production-secret-key-for-the-check-0123456789",
        "ALLOWED_HOSTS": "perf.example.com",
        "FIELD_ENCRYPTION_KEY": "0" * 43 + "=",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "REDIS_URL": os.environ["REDIS_URL"],
    }
    proc = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no issues" in proc.stdout


def test_production_refuses_to_start_without_secret_key():
    env = {"PATH": os.environ["PATH"], "DJANGO_PRODUCTION": "1", "ALLOWED_HOSTS": "x"}
    proc = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "SECRET_KEY" in proc.stderr
