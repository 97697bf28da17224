"""A campaign's run that failed, or succeeded on a disturbed client host, is measured again, once (issue 47.2).

Only a campaign's: its cells are series of a fixed n that a table is drafted from, and a lost run would leave a cell
short; a run launched by hand is the operator's to launch again. Once: a retry that fails too is kept as it ended
(its cell says so), never retried in a loop against a target that cannot run it. A cancelled run is not retried: a
person stopped it. The retry is an ordinary run of the same set-up, group and round, queued behind what is already
queued; it is held, like its campaign's other queued runs, while the campaign is paused."""

from django.db import transaction

from .dispatch import enqueue
from .models import Campaign, Run, RunState


def needs_retry(run):
    """Whether `run`, as it ended, is one a campaign measures again: failed, or succeeded on a disturbed client."""
    return run.state == RunState.FAILED or (run.state == RunState.SUCCEEDED and bool(run.disturbed))


def retry_once(run):
    """Queue the one retry of a campaign's run that has just ended failed or disturbed (runs/actions.py, inside the
    transaction that ended it, before its group is judged). Returns the retry, or None."""
    if run.retry_of_id or not run.repeat_group_id or run.cancel_requested or not needs_retry(run):
        return None
    campaign = Campaign.objects.filter(cells__repeat_group_id=run.repeat_group_id).only("paused_at").first()
    if campaign is None or Run.objects.filter(retry_of=run).exists():
        return None
    if Run.objects.filter(repeat_group__campaign_cell__campaign=campaign, state=RunState.CANCELLED).exists():
        return None  # a campaign being cancelled (campaigns.cancel_campaign) gets no new run
    retry = Run.objects.create(
        target=run.target, profile=run.profile, overrides=run.overrides, params=run.params,
        requested_by_id=run.requested_by_id, step_count=run.step_count, repeat_group_id=run.repeat_group_id,
        repeat_index=run.repeat_index, block=run.block, retry_of=run, held=campaign.paused_at is not None)
    if not retry.held:
        transaction.on_commit(lambda: enqueue(retry))
    return retry
