"""A multi-client run's clients change state only through runs/actions.py, by the table in runs/models.py
(CLIENT_TRANSITIONS), as the run itself does (issue 38.5): a final client state is never left, every reason is
masked and clamped on one path."""

import pytest

from runs import actions
from runs.models import ClientState, Run, RunClient, Target

from testbed.runs_support import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(profiles, operator_user):
    target = Target(name="clients", engine="mysql", host="127.0.0.1", port=3306, database="sbtest", user="bench")
    target.set_password(PASSWORD)
    target.save()
    profile = profiles["sysbench-oltp-rw-mysql-quick"]
    return Run.objects.create(target=target, profile=profile, params=profile.resolve({"client_hosts": 2}),
                              requested_by=operator_user)


def client(run, index):
    return RunClient.objects.create(run=run, index=index, threads=1)


def test_it_moves_a_client_from_waiting_through_arrived_and_running_to_done(run):
    two = client(run, 2)
    assert actions.client_arrive(two, host="h2", worker="w2", worker_pid=42)
    assert not actions.client_arrive(two, host="h3")  # a redelivered message: already taken
    assert actions.client_ready(two, "run-1") and actions.client_ready(two, "run-2")
    assert actions.client_end(two, ClientState.DONE)
    two.refresh_from_db()
    assert (two.state, two.host, two.ready_for) == (ClientState.DONE, "h2", "run-2")


def test_it_never_leaves_a_final_state(run):
    two = client(run, 2)
    actions.client_arrive(two, host="h2")
    assert actions.client_end(two, ClientState.DONE)
    assert not actions.client_end(two, ClientState.FAILED, "late internal error")
    assert not actions.client_ready(two, "run-1")
    two.refresh_from_db()
    assert (two.state, two.reason) == (ClientState.DONE, "")


def test_it_masks_and_clamps_every_reason(run):
    two = client(run, 2)
    actions.client_end(two, ClientState.FAILED, f"password={PASSWORD} " + "x" * 6000)
    two.refresh_from_db()
    assert PASSWORD not in two.reason and len(two.reason) == actions.MAX_REASON_CHARS


def test_it_stops_only_the_clients_no_worker_took(run):
    one, two = client(run, 1), client(run, 2)
    client(run, 3)
    actions.client_ready(one, "run-1")
    actions.client_arrive(two, host="h2")
    assert actions.stop_unstarted_clients(run) == 1
    states = dict(RunClient.objects.filter(run=run).values_list("index", "state"))
    assert states == {1: ClientState.RUNNING, 2: ClientState.ARRIVED, 3: ClientState.STOPPED}


def test_it_refuses_a_state_written_around_the_actions(run):
    with pytest.raises(AssertionError):
        client(run, 2).set(state=ClientState.DONE)
