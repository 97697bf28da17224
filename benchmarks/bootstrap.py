"""The one Django set-up of the benchmark scripts (run as `python benchmarks/<script>.py`, so this folder is on
sys.path): the checkout importable, config.settings, the script's own dashboard database created when missing,
then Django. Servers and users a benchmark starts come from testbed/, as the tests' do."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402  (after the checkout is importable)
import psycopg  # noqa: E402


def ensure_database():
    """The database DATABASE_URL names, created on the local PostgreSQL when missing (a benchmark's own)."""
    name = os.environ["DATABASE_URL"].rsplit("/", 1)[1]
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as pg:
        if not pg.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            pg.execute(f"CREATE DATABASE {name}")


def setup(own_database=True):
    """Django, on the script's own database (created first) unless own_database is False."""
    if own_database:
        ensure_database()
    django.setup()


def launcher():
    """What a benchmark that launches runs needs, on its own database: migrated, the profiles seeded, the bench users
    made (testbed/runs_support.py), and an API client of a staff operator, `bench-operator`."""
    setup()  # before the imports below: they need the apps loaded
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from rest_framework.test import APIClient

    from testbed.runs_support import ensure_database_users

    call_command("migrate", verbosity=0)
    call_command("seed_profiles", stdout=open(os.devnull, "w"))
    ensure_database_users()
    user, _ = User.objects.get_or_create(username="bench-operator", defaults={"is_staff": True})
    api = APIClient()
    api.force_authenticate(user)
    api.force_login(user)  # pages too (a run page's partials)
    return api


def local_target(name, engine, queue="benchmarks"):
    """The benchmark target `name` on this machine's own server for `engine` (MariaDB on 3306, PostgreSQL on 5432),
    as testbed/runs_support.py's bench user on its bench database; created or brought up to date, password set."""
    from runs.models import Target
    from testbed.runs_support import DB_USER, MYSQL_DB, PASSWORD, PG_DB

    port, database = (3306, MYSQL_DB) if engine == "mysql" else (5432, PG_DB)
    target, _ = Target.objects.update_or_create(name=name, defaults=dict(
        engine=engine, host="127.0.0.1", port=port, database=database, user=DB_USER, queue=queue))
    target.set_password(PASSWORD)
    target.save()
    return target
