"""The client-bound flag says what saturated (issue 33.7): a run whose target is on the client's own host (a
loopback address: the tool and the database share the machine, as every run on this 2-core machine does) says the
result measures the shared host, on the run page, in the API and on a published row and its record; a run whose
target is elsewhere keeps "the client host was above 90 % CPU". Stored runs: the rule reads the run's own fields."""

import ipaddress
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from runs.models import Run, RunState, Target
from runs.addresses import on_this_host

from testbed.fault_stack import free_port
from testbed.runs_support import DB_USER, MYSQL_DB, PASSWORD, wait_final
from .test_runs_trust import make_target

ROOT = Path(__file__).resolve().parent.parent

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


def own_interface_addresses():
    """This machine's IPv4 addresses other than loopback, as `ip` lists them (not the code under test)."""
    listed = subprocess.run(["ip", "-j", "-4", "addr"], capture_output=True, text=True, check=True).stdout
    return [a["local"] for link in json.loads(listed) for a in link.get("addr_info", [])
            if not ipaddress.ip_address(a["local"]).is_loopback]


def test_which_addresses_are_this_hosts_own():
    assert on_this_host("127.0.0.1") is True and on_this_host("::1") is True
    for address in own_interface_addresses():
        assert on_this_host(address) is True, address
    assert on_this_host("198.51.100.7") is False  # TEST-NET-2: nobody's here
    assert on_this_host("db.example") is None  # a name that did not resolve: cannot be told


@pytest.mark.django_db(transaction=True)
def test_a_target_at_the_hosts_own_interface_address_measures_the_shared_host(worker, committed, operator_api, client, staff_user):
    """33.7 for a non-loopback address: the machine's MariaDB reached through the machine's own interface address (a
    relay there, with no delay, to 127.0.0.1:3306: the server listens on loopback only). The worker finds the
    address to be its host's own; a client-bound run then says it measures the shared host. Before, only a loopback
    address did, and this run read "the client host was above 90 % CPU"."""
    addresses = own_interface_addresses()
    if not addresses:
        pytest.skip("this machine has no address but loopback")
    port = free_port()
    relay = subprocess.Popen([sys.executable, str(ROOT / "tests" / "delay_relay.py"), addresses[0], str(port), "127.0.0.1",
                              "3306", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        assert relay.stdout.readline().strip() == "relaying"
        target = Target(name="own-address", engine="mysql", host=addresses[0], port=port, database=MYSQL_DB, user=DB_USER,
                        vcpus=2, memory_gb=4)
        target.set_password(PASSWORD)
        target.save()
        response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick"},
                                     format="json")
        assert response.status_code == 201, response.content
        run = wait_final(response.json()["id"], timeout=120)
    finally:
        os.killpg(relay.pid, signal.SIGTERM)
        relay.wait(timeout=30)
    assert run.state == RunState.SUCCEEDED, run.reason
    # The key names this host as every spelling of it does (issue 50.3: runs/addresses.py); the worker's own finding
    # is what the cause is read from.
    assert run.database_key.split("|")[1] == "127.0.0.1" and run.client_info["target_on_client_host"] is True
    if not run.client_bound:  # whether the CPU was above 90 % for most of the step depends on the machine's load
        Run.objects.filter(pk=run.pk).update(client_bound=True)
    staff = APIClient()
    staff.force_authenticate(staff_user)
    assert staff.get(f"/api/v1/runs/{run.pk}/").json()["client_bound_cause"] == "shared_host"
    client.force_login(staff_user)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'data-cause="shared_host"' in page and "this result measures the shared host, not the target alone" in page


def test_the_workers_own_finding_decides_over_the_key(client, staff_user, profiles):
    """The key names every address of the dashboard's host 127.0.0.1 (runs/addresses.py); a worker on another host that
    found the target not to be its own measured its own CPU, not a host it shares with the server."""
    run = client_bound_run(profiles, staff_user, "127.0.0.1")
    Run.objects.filter(pk=run.pk).update(client_info={"target_on_client_host": False})
    api = APIClient()
    api.force_authenticate(staff_user)
    assert api.get(f"/api/v1/runs/{run.pk}/").json()["client_bound_cause"] == "client_cpu"
