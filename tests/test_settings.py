import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_production_settings_pass_check_deploy_without_warnings():
    """Run as a deployment would, before `migrate`: the check must not depend on the database's contents."""
    env = {
        "PATH": os.environ["PATH"],
        "DJANGO_PRODUCTION": "1",
        "SECRET_KEY": "x" * 20 + "a-long-random-production-secret-key-for-the-check-0123456789",
        "ALLOWED_HOSTS": "perf.example.com",
        "FIELD_ENCRYPTION_KEY": "0" * 43 + "=",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/perfdash_not_migrated_yet",
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


def test_embedded_default_sqlite_migrates_imports_and_exports_the_same_rows(embedded_sqlite, db):
    """With no configuration the dashboard runs on SQLite: the schema, the import (embedded_sqlite: both must
    succeed) and the export work there too, and give the same CSV as PostgreSQL."""
    import io

    from django.core.management import call_command

    exported = embedded_sqlite.manage("export_results")
    on_postgresql = io.StringIO()
    call_command("export_results", stdout=on_postgresql)
    assert exported == on_postgresql.getvalue()
    assert exported.count("\n") == 443


def test_docker_compose_defaults_pass_check_deploy_without_warnings():
    """The README says the production shape (docker-compose.yml) passes `check --deploy`: its app environment, each
    ${VAR:-default} at its default and each required ${VAR:?} given a value, is checked as it stands (issue 50.10: its
    SECURE_SSL_REDIRECT default of 0 made the check warn W008)."""
    import re

    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    required = {"SECRET_KEY": "x" * 20 + "a-long-random-production-secret-key-for-the-check-0123456789",
                "FIELD_ENCRYPTION_KEY": "0" * 43 + "="}

    def resolve(value):
        def one(match):
            name, op, default = match.group(1), match.group(2), match.group(3)
            return required[name] if op == ":?" else default
        return re.sub(r"\$\{(\w+)(:-|:\?)([^}]*)\}", one, str(value))

    env = {"PATH": os.environ["PATH"], **{k: resolve(v) for k, v in compose["x-app"]["environment"].items()}}
    env.update(DATABASE_URL="postgres://postgres@127.0.0.1:5432/perfdash_not_migrated_yet", REDIS_URL=os.environ["REDIS_URL"])
    proc = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no issues" in proc.stdout
