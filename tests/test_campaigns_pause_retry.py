"""Campaigns (issue 47.2): pause, resume and the one retry of a failed or disturbed run, through the API and the run
engine's own actions (runs/actions.py: what the worker and the reconciler call), without a worker. The same with a
real worker, a killed worker and a restarted broker: tests/test_faults.py.

Pause holds the campaign's queued runs: a worker asking to claim one is refused, they keep no place in their target's
queue (a run launched by hand after them goes first), and the reconciler neither sends them again nor fails them;
resume releases them. A campaign's run that fails, or succeeds on a disturbed client host, is run again once, in its
round, and the cell's series counts the retry; a retry that fails is kept as it ended."""

from datetime import timedelta

import pytest
from django.utils import timezone

from runs import actions, reconciler
from runs.campaigns import cells, launch_campaign, state_of
from runs.models import Run, RunState
from runs.services import launch_run
from testbed.runs_support import make_targets, make_user

from .test_campaigns import SYSBENCH, sized_mysql

pytestmark = pytest.mark.django_db


def launched(profiles, user, targets, repeats=2):
    return launch_campaign(name="c", profile=profiles[SYSBENCH], overrides={}, targets=targets, user=user, repeats=repeats)


def campaign_runs(campaign):
    return list(Run.objects.filter(repeat_group__campaign_cell__campaign=campaign).order_by("pk"))


def succeed(run, tps, disturbed=False):
    """The worker's moves for a run that measured `tps` (disturbed: on a client host loaded beyond its cores)."""
    assert actions.claim(run, "w", 1, "h", 2) and actions.start_measuring(run) and actions.start_cleanup(run)
    if disturbed:
        Run.objects.filter(pk=run.pk).update(disturbed=True)
        run.refresh_from_db()
    assert actions.succeed(run, {"tps": tps})


def test_pause_holds_its_queued_runs_and_resume_releases_them(operator_api, operator_user, profiles, settings):
    api, user = operator_api, operator_user
    small, large = make_targets()["mysql"], sized_mysql("mysql-4-8", 4, 8)
    campaign = launched(profiles, user, [small, large])
    first = campaign_runs(campaign)[0]
    actions.claim(first, "w", 1, "h", 2)  # round 1's first run is active: pausing lets it finish
    answer = api.post(f"/api/v1/campaigns/{campaign.pk}/pause/")
    assert answer.status_code == 200, answer.content
    assert answer.json()["state"] == "paused" and answer.json()["paused_at"]
    runs = campaign_runs(campaign)
    assert [r.held for r in runs] == [False, True, True, True]
    assert runs[0].state == RunState.PREPARING

    # A worker holding a held run's message is refused it; a run launched by hand later on the same database is not
    # kept behind the held ones (it would wait until the campaign resumes).
    assert actions.claim(runs[1], "w", 2, "h", 2) is False and Run.objects.get(pk=runs[1].pk).state == RunState.QUEUED
    by_hand = launch_run(target=small, profile=profiles[SYSBENCH], overrides={}, user=user)
    assert not by_hand.queued_ahead().exists()

    # The reconciler, long after the requeue and the unclaimed limits, neither sends a held run again nor fails it.
    long_ago = timezone.now() - timedelta(hours=2)
    Run.objects.filter(pk__in=[r.pk for r in runs[1:]]).update(created_at=long_ago, heartbeat_at=long_ago)
    settings.RUNS_UNCLAIMED_FAIL_SECONDS = 1
    reconciler.reconcile()
    assert [(r.state, r.held, r.heartbeat_at) for r in Run.objects.filter(pk__in=[r.pk for r in runs[1:]]).order_by("pk")] == [
        (RunState.QUEUED, True, long_ago)] * 3

    assert api.post(f"/api/v1/campaigns/{campaign.pk}/pause/").status_code == 409  # already paused
    answer = api.post(f"/api/v1/campaigns/{campaign.pk}/resume/")
    assert answer.status_code == 200 and answer.json()["paused_at"] is None and answer.json()["state"] == "running"
    assert not Run.objects.filter(pk__in=[r.pk for r in runs], held=True).exists()
    conflict = api.post(f"/api/v1/campaigns/{campaign.pk}/resume/")
    assert conflict.status_code == 409 and "not paused" in conflict.json()["detail"]
    assert actions.claim(Run.objects.get(pk=by_hand.pk), "w", 3, "h", 2) is False  # the active run still holds it


def test_only_its_launcher_or_staff_pause_and_nothing_left_to_start_is_a_conflict(operator_api, operator_user, profiles, client):
    api, user = operator_api, operator_user
    campaign = launched(profiles, user, [make_targets()["mysql"]])
    other = make_user("campaign-other-op", operator=True)
    client.force_login(other)
    for verb in ("pause", "resume"):
        answer = client.post(f"/api/v1/campaigns/{campaign.pk}/{verb}/")
        assert answer.status_code == 403, answer.content
    assert state_of(campaign) == "queued"
    Run.objects.filter(repeat_group__campaign_cell__campaign=campaign).update(state=RunState.SUCCEEDED, summary={"tps": 1.0})
    answer = api.post(f"/api/v1/campaigns/{campaign.pk}/pause/")
    assert answer.status_code == 409 and "no run left to start" in answer.json()["detail"]
    campaign.refresh_from_db()
    assert campaign.paused_at is None  # a refused pause stores nothing


def test_a_failed_run_is_retried_once_in_its_round_and_the_cell_counts_the_retry(operator_api, operator_user, profiles):
    api, user = operator_api, operator_user
    campaign = launched(profiles, user, [make_targets()["mysql"]], repeats=2)
    one, two = campaign_runs(campaign)
    succeed(one, 100.0)
    assert actions.fail(two, "the target went away")
    retry = Run.objects.get(retry_of=two)
    assert (retry.state, retry.block, retry.repeat_group_id, retry.params) == (RunState.QUEUED, two.block,
                                                                                two.repeat_group_id, two.params)
    # The group is not judged while its retry is queued, and the campaign is still running.
    assert Run.objects.get(pk=one.pk).trend == {} and state_of(campaign) == "running"
    [cell] = api.get(f"/api/v1/campaigns/{campaign.pk}/").json()["cells"]
    assert cell["retries"] == [{"round": two.block, "run": two.pk, "retry": retry.pk}]
    assert cell["runs"] == [one.pk, retry.pk] and cell["n"] == 1

    succeed(retry, 110.0)
    [cell] = api.get(f"/api/v1/campaigns/{campaign.pk}/").json()["cells"]
    assert (cell["n"], cell["mean_tps"], cell["state"]) == (2, 105.0, "finished")  # (100 + 110) / 2
    assert Run.objects.get(pk=one.pk).trend["repeat_group"]["runs"] == [one.pk, retry.pk]


def test_a_retry_that_fails_is_not_retried_and_a_disturbed_run_is_retried(profiles):
    user = make_user("campaign-retry", operator=True)
    campaign = launched(profiles, user, [make_targets()["mysql"]], repeats=2)
    one, two = campaign_runs(campaign)
    actions.fail(one, "first failure")
    retry = Run.objects.get(retry_of=one)
    actions.fail(retry, "second failure")
    assert not Run.objects.filter(retry_of=retry).exists()
    succeed(two, 50.0, disturbed=True)
    again = Run.objects.get(retry_of=two)
    assert again.state == RunState.QUEUED
    [cell] = cells(campaign)
    assert cell.series is None  # a failed retry and a disturbed run: nothing counts yet
    assert sorted(cell.retried) == [1, 2]


def test_a_cancelled_or_hand_launched_run_is_not_retried_and_a_paused_campaigns_retry_is_held(operator_api, operator_user, profiles):
    api, user = operator_api, operator_user
    target = make_targets()["mysql"]
    by_hand = launch_run(target=target, profile=profiles[SYSBENCH], overrides={}, user=user)
    actions.fail(by_hand, "not a campaign's")
    assert not Run.objects.filter(retry_of=by_hand).exists()

    campaign = launched(profiles, user, [target], repeats=3)
    one, *_later = campaign_runs(campaign)
    actions.claim(one, "w", 1, "h", 2)
    assert api.post(f"/api/v1/campaigns/{campaign.pk}/pause/").status_code == 200
    actions.fail(Run.objects.get(pk=one.pk), "lost while the campaign was paused")
    retry = Run.objects.get(retry_of=one)
    assert retry.held and retry.state == RunState.QUEUED
    assert api.post(f"/api/v1/campaigns/{campaign.pk}/cancel/").status_code == 202
    assert not Run.objects.filter(repeat_group__campaign_cell__campaign=campaign, state=RunState.QUEUED).exists()
    assert state_of(campaign) == "cancelled"
