"""Targets' users with the least rights a run needs (issue 33.8): docs/runs.md gives the statements for MySQL/MariaDB
and PostgreSQL; the suite's own bench user is made with exactly those (testbed/runs_support.py), is neither root nor a
superuser nor its database's owner, and real sysbench and pgbench runs through a worker succeed with it, server-side
evidence and every server setting included. Before, the user had ALL on its MariaDB database and owned its
PostgreSQL one, and the docs said nothing."""

from pathlib import Path

import psycopg
import pymysql
import pytest

from runs.models import RunState

from testbed.runs_support import DB_USER, MYSQL_DB, PG_DB, make_targets, mysql_grants, postgresql_grants, wait_final

ROOT = Path(__file__).resolve().parent.parent


def test_the_docs_give_the_statements_the_suite_runs():
    page = (ROOT / "docs" / "runs.md").read_text()
    server_wide, in_database = postgresql_grants("<database>", "<user>")
    for statement in [*mysql_grants("<database>", "'<user>'@'%'"), *server_wide, *in_database]:
        assert statement + ";" in page, statement


def test_the_bench_user_has_those_rights_and_no_more(bench_users):
    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="")
    with conn.cursor() as cur:
        cur.execute(f"SHOW GRANTS FOR '{DB_USER}'@'%'")
        grants = [row[0] for row in cur.fetchall()]
    conn.close()
    assert grants[0].startswith(f"GRANT USAGE ON *.* TO `{DB_USER}`@`%`")  # no global privilege
    assert f"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX ON `{MYSQL_DB}`.* TO `{DB_USER}`@`%`" in grants
    assert f"GRANT SELECT ON `performance_schema`.* TO `{DB_USER}`@`%`" in grants
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres") as pg:
        role = pg.execute("SELECT rolsuper, rolcreatedb, rolcreaterole, rolbypassrls FROM pg_roles WHERE rolname = %s",
                          [DB_USER]).fetchone()
        owner = pg.execute("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = %s", [PG_DB]).fetchone()[0]
        member_of = {r[0] for r in pg.execute("SELECT b.rolname FROM pg_auth_members m JOIN pg_roles b ON b.oid = m.roleid "
                                              "JOIN pg_roles u ON u.oid = m.member WHERE u.rolname = %s", [DB_USER])}
    assert role == (False, False, False, False) and owner == "postgres"
    assert member_of == {"pg_read_all_stats", "pg_read_all_settings"}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("engine, profile", [("mysql", "sysbench-oltp-rw-mysql-quick"),
                                             ("postgresql", "sysbench-oltp-rw-postgresql-quick"),
                                             ("postgresql", "pgbench-rw-quick")])
def test_runs_succeed_with_evidence_through_those_rights(worker, committed, operator_api, engine, profile):
    target = make_targets()[engine]
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": profile}, format="json")
    assert response.status_code == 201, response.content
    run = wait_final(response.json()["id"], timeout=120)
    assert run.state == RunState.SUCCEEDED, run.reason
    assert run.server_samples.exclude(server_tps=None).exists()  # the server's counters, read every interval
    assert run.insight["steps"][0]["server"]["agreement_pct"] is not None
    if engine == "postgresql":  # shown to superusers and pg_read_all_settings only
        assert run.server_settings["data_directory"].startswith("/")
    else:
        assert run.server_settings["innodb_buffer_pool_size"]
    # Its cleanup dropped what it made, with those rights.
    if engine == "mysql":
        conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="", database=MYSQL_DB)
        with conn.cursor() as cur:
            cur.execute("SHOW TABLES LIKE 'sbtest%%'")
            assert cur.fetchall() == ()
        conn.close()
    else:
        with psycopg.connect(f"postgresql://postgres@127.0.0.1:5432/{PG_DB}") as pg:
            assert pg.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND "
                              "(tablename LIKE 'sbtest%%' OR tablename LIKE 'pgbench%%')").fetchall() == []
