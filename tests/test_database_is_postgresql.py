from django.db import connection


def test_suite_runs_on_postgresql(db):
    assert connection.vendor == "postgresql"
