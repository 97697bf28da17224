"""The client-bound flag says what saturated (issue 33.7): a run whose target is on the client's own host (a
loopback address: the tool and the database share the machine, as every run on this 2-core machine does) says the
result measures the shared host, on the run page, in the API and on a published row and its record; a run whose
target is elsewhere keeps "the client host was above 90 % CPU". Stored runs: the rule reads the run's own fields."""

import pytest
from rest_framework.test import APIClient

from runs.models import Run, RunState

from .test_runs_trust import make_target

pytestmark = pytest.mark.django_db


def client_bound_run(profiles, user, host):
    quick = profiles["sysbench-oltp-rw-mysql-quick"]
    target = make_target(f"t-{host.replace('.', '-')}", "mysql", vcpus=2, memory_gb=4)
    target.host = host
    target.save()
    return Run.objects.create(target=target, profile=quick, params=quick.resolve({}), requested_by=user, client_bound=True,
                              state=RunState.SUCCEEDED, server_version="10.11.19-MariaDB", tool_version="1.0.20",
                              summary={"tps": 300.0, "qps": 6000.0, "threads": 2})


def test_a_target_on_the_clients_own_host_measures_the_shared_host(client, staff_user, profiles):
    shared = client_bound_run(profiles, staff_user, "127.0.0.1")
    remote = client_bound_run(profiles, staff_user, "192.0.2.10")  # TEST-NET-1: another host
    client.force_login(staff_user)
    page = client.get(f"/runs/{shared.pk}/").content.decode()
    assert 'data-cause="shared_host"' in page and "this result measures the shared host, not the target alone" in page
    page = client.get(f"/runs/{remote.pk}/").content.decode()
    assert 'data-cause="client_cpu"' in page and "measures the shared host" not in page
    api = APIClient()
    api.force_authenticate(staff_user)
    assert api.get(f"/api/v1/runs/{shared.pk}/").json()["client_bound_cause"] == "shared_host"
    assert api.get(f"/api/v1/runs/{remote.pk}/").json()["client_bound_cause"] == "client_cpu"
    assert client.post(f"/runs/{shared.pk}/publish/").status_code == 302
    row = Run.objects.get(pk=shared.pk).published_result
    document = client.get(row.table.document.get_absolute_url()).content.decode()
    assert 'data-flag="client_bound" data-cause="shared_host"' in document
    record = APIClient().get(f"/runs/{shared.pk}/record/").content.decode()
    assert 'id="record-client-bound" data-cause="shared_host"' in record
