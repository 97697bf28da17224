"""Campaigns (issue 47.1-2): one profile over several targets, each target a cell measured as a series, rounds
interleaving the targets in a shuffled order, through the run machinery (runs/campaigns.py launch_campaign, the
action the page and the API will call).

Without a worker: a launch stores one cell per target with the target's declared size, one repeat group per cell
sharing the campaign's launch id, runs created round by round (each round every cell once); a bad launch names each
field and stores nothing, and the footprint asked to confirm is the whole campaign's. With the real worker and the
machine's MariaDB: tests/test_campaign_edition_real.py (3 targets x 3 repeats, each cell's series against the TPS
sysbench printed, and the edition drafted from them)."""

import pytest
from django.core.exceptions import ValidationError

from runs.campaigns import campaign_state, cancel_campaign, cells, launch_campaign, state_of
from runs.models import Campaign, CampaignCell, RepeatGroup, Run, RunState, Target
from testbed.runs_support import DB_USER, MYSQL_DB, PASSWORD, make_targets, make_user

SYSBENCH = "sysbench-oltp-rw-mysql-quick"


def sized_mysql(name, vcpus, memory_gb):
    """A second entry for the machine's MariaDB with a declared size of its own (a flavour the campaign measures)."""
    target = Target(name=name, engine="mysql", host="127.0.0.1", port=3306, database=MYSQL_DB, user=DB_USER,
                    vcpus=vcpus, memory_gb=memory_gb, family="general", server_version="11.4")
    target.set_password(PASSWORD)
    target.save()
    return target


@pytest.mark.django_db
def test_it_stores_a_cell_per_target_and_runs_round_by_round(profiles):
    user = make_user("campaign-op", operator=True)
    small, large = make_targets()["mysql"], sized_mysql("mysql-4-8", 4, 8)
    campaign = launch_campaign(name=" Quick matrix ", profile=profiles[SYSBENCH], overrides={"threads": 2},
                               targets=[small, large], user=user, repeats=3)
    assert campaign.name == "Quick matrix" and campaign.repeats == 3 and campaign.created_by == user
    found = list(CampaignCell.objects.filter(campaign=campaign))
    assert [(c.position, c.target, c.vcpus, c.memory_gb, c.family) for c in found] == [
        (0, small, 2, 4, "general"), (1, large, 4, 8, "general")]
    assert found[1].engine_version == "11.4"
    assert {c.repeat_group.launch for c in found} == {campaign.launch} and [c.repeat_group.count for c in found] == [3, 3]
    runs = list(Run.objects.filter(repeat_group__campaign_cell__campaign=campaign).order_by("pk"))
    # Created, and so queued, round after round: each round runs every cell once.
    assert [r.block for r in runs] == [1, 1, 2, 2, 3, 3]
    for block in (1, 2, 3):
        assert sorted(r.target.name for r in runs if r.block == block) == sorted([small.name, large.name])
    assert all(r.state == RunState.QUEUED and r.params["threads"] == 2 and r.requested_by == user for r in runs)
    assert state_of(campaign) == "queued"
    matrix = cells(campaign)
    assert [sorted(c.rounds) for c in matrix] == [[1, 2, 3], [1, 2, 3]] and [c.series for c in matrix] == [None, None]


def fields_of(launch):
    with pytest.raises(ValidationError) as caught:
        launch()
    return set(caught.value.message_dict)


@pytest.mark.django_db
def test_a_bad_launch_names_each_field_and_stores_nothing(profiles):
    user = make_user("campaign-bad", operator=True)
    targets = make_targets()
    mysql, pg = targets["mysql"], targets["postgresql"]
    profile = profiles[SYSBENCH]

    def launch(**changes):
        kwargs = {"name": "m", "profile": profile, "overrides": {}, "targets": [mysql], "user": user, "repeats": 2,
                  **changes}
        return fields_of(lambda: launch_campaign(**kwargs))

    before = (Campaign.objects.count(), RepeatGroup.objects.count(), Run.objects.count())
    assert launch(name="  ") == {"name"}
    assert launch(repeats=1) == {"repeats"}
    assert launch(repeats=31) == {"repeats"}
    assert launch(targets=[]) == {"targets"}
    assert launch(targets=[mysql, mysql]) == {"targets"}
    assert launch(targets=[mysql, pg]) == {"targets.1.profile"}
    assert launch(overrides={"threads": 0}, targets=[mysql, sized_mysql("mysql-b", 4, 8)]) == {"threads"}
    assert launch(name="", repeats=0) == {"name", "repeats"}
    # The footprint is the whole campaign's: 400 s a run, 5 rounds, is 2000 s on one target (no confirmation) and
    # 4000 s on two (more than the hour that asks for one).
    assert (Campaign.objects.count(), RepeatGroup.objects.count(), Run.objects.count()) == before
    long = {"duration_s": 400}
    assert launch_campaign(name="one", profile=profile, overrides=long, targets=[mysql], user=user, repeats=5)
    before = (Campaign.objects.count(), RepeatGroup.objects.count(), Run.objects.count())
    assert launch(overrides=long, repeats=5, targets=[mysql, sized_mysql("mysql-c", 8, 16)]) == {"confirm"}
    assert (Campaign.objects.count(), RepeatGroup.objects.count(), Run.objects.count()) == before
    assert launch_campaign(name="two", profile=profile, overrides=long, targets=[mysql, Target.objects.get(name="mysql-c")],
                           user=user, repeats=5, confirm=True)

@pytest.mark.django_db
def test_cancelling_a_campaign_cancels_its_unfinished_runs_and_keeps_the_finished(profiles):
    user = make_user("campaign-cancel", operator=True)
    campaign = launch_campaign(name="c", profile=profiles[SYSBENCH], overrides={}, targets=[make_targets()["mysql"]],
                               user=user, repeats=3)
    runs = list(Run.objects.filter(repeat_group__campaign_cell__campaign=campaign).order_by("block"))
    Run.objects.filter(pk=runs[0].pk).update(state=RunState.SUCCEEDED, summary={"tps": 100.0})  # round 1 finished
    assert cancel_campaign(campaign, user) == 2
    states = dict(Run.objects.filter(pk__in=[r.pk for r in runs]).values_list("block", "state"))
    assert states == {1: RunState.SUCCEEDED, 2: RunState.CANCELLED, 3: RunState.CANCELLED}
    assert all("campaign-cancel" in r.reason for r in Run.objects.filter(state=RunState.CANCELLED))
    assert state_of(campaign) == "cancelled" and cancel_campaign(campaign, user) == 0
    [cell] = cells(campaign)
    assert cell.series.n == 1 and cell.series.mean == 100.0 and cell.state == "cancelled"


def test_its_state_is_derived_from_its_runs():
    q, r, s, f, c = RunState.QUEUED, RunState.RUNNING, RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED
    assert campaign_state([q, q]) == "queued"
    assert campaign_state([s, q]) == "running" and campaign_state([r, q]) == "running"
    assert campaign_state([s, f]) == "finished" and campaign_state([s, c, q]) == "running"
    assert campaign_state([s, c]) == "cancelled"
