"""Reproduce treats the engine and its major version as decisive (issue 33.4): a run whose parameters match Huawei's
MySQL 8.0 row exactly (huawei-2025-10-21-mysql.yaml, methodology huawei-2025-10-21-mysql-sysbench-80: 64 tables x
10,000,000 rows, 200 threads, 3600 s) but ran on MariaDB 10.11 (the server version this machine's MariaDB reports) is
not a reproduction, and "what differs" says engine and major version; MySQL 8.0.36 is one; so are the server
settings a methodology states."""

import re

import pytest

from runs.models import Run, RunState

from .test_runs_trust import huawei_mysql80_row, make_target

pytestmark = pytest.mark.django_db


def matching_run(profiles, user, server_version, **fields):
    profile = profiles["sysbench-oltp-rw-mysql"]
    params = profile.resolve({"tables": 64, "rows_per_table": 10_000_000, "threads": 200, "duration_s": 3600, "thread_sweep": []})
    return Run.objects.create(target=make_target("maria", "mysql", vcpus=2, memory_gb=4), profile=profile, params=params,
                              requested_by=user, state=RunState.SUCCEEDED, reproduces=huawei_mysql80_row(),
                              tool_version="1.0.18", server_version=server_version,
                              summary={"tps": 900.0, "qps": 18000.0, "transactions": 4500}, **fields)


def differing(html):
    # The client always differs from the document's ECS (shown, not decisive): left out here.
    return set(re.findall(r'<tr class="differs" data-aspect="([a-z_:]+)"', html)) - {"client"}


def test_a_matching_run_on_mariadb_is_not_a_reproduction_of_a_mysql_row(client, staff_user, profiles):
    run = matching_run(profiles, staff_user, "10.11.19-MariaDB-0+deb12u1")
    client.force_login(staff_user)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert differing(html) == {"engine", "major_version"}
    engine = re.search(r'data-aspect="engine">(.*?)</tr>', html, re.S).group(1)
    version = re.search(r'data-aspect="major_version">(.*?)</tr>', html, re.S).group(1)
    assert "<td class=\"text\">MySQL</td><td class=\"text\">MariaDB</td>" in engine
    assert "<td class=\"text\">8.0</td><td class=\"text\">10.11</td>" in version
    assert 'id="not-faithful"' in html and 'id="faithful"' not in html
    confirm = client.get(f"/runs/{run.pk}/publish/").content.decode()
    assert differing(confirm) >= {"engine", "major_version"}


def test_the_same_engine_and_major_version_is_a_reproduction(client, staff_user, profiles):
    run = matching_run(profiles, staff_user, "8.0.36")
    client.force_login(staff_user)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert differing(html) == set() and 'id="faithful"' in html


def test_the_server_settings_a_methodology_states_are_decisive(client, staff_user, profiles):
    row = huawei_mysql80_row()
    methodology = row.table.methodology
    methodology.parameters = {**methodology.parameters, "server_settings": {"innodb_flush_log_at_trx_commit": "1"}}
    methodology.save()
    run = matching_run(profiles, staff_user, "8.0.36", server_settings={"innodb_flush_log_at_trx_commit": "2"})
    client.force_login(staff_user)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert differing(html) == {"setting:innodb_flush_log_at_trx_commit"} and 'id="not-faithful"' in html
