"""A run's state changes, one function each: claim it, start measuring, start cleaning up, succeed, fail, cancel,
finish a cancel. Every page, API view, task and the reconciler calls these; Run.transition is the guarded move
underneath (the row in the database decides, so two workers or a late message never move a run twice).

What follows a final state lives here too: the judgement against the run's series (runs/history.py), once, by
whichever path ended the run. Publishing and retracting, which change what a run is in the catalogue rather
than its state, are runs/publish.py's publish_run and retract_run."""

from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from whitepaper import webhooks

from . import history, retries, stats
from .access import TargetAccess
from .models import ACTIVE_STATES, ClientState, Run, RunClient, RunState, Sample

MAX_REASON_CHARS = 5000


def claim(run, worker, pid, client_host, client_cores):
    """queued -> preparing by this worker, unless another run of the same server and database is active or queued
    before it where a worker can take it (then False: wait; Run.queued_ahead says the order, Run.takeable_ahead which
    of those count), or the run is held (then False: its campaign is paused)."""
    return run.transition(RunState.PREPARING, allowed_from=[RunState.QUEUED], only_if=Q(held=False),
                          unless=run.takeable_ahead(), worker=worker,
                          worker_pid=pid, client_host=client_host, client_cores=client_cores, started_at=timezone.now())


def start_measuring(run):
    return run.transition(RunState.RUNNING)


def start_cleanup(run):
    return run.transition(RunState.CLEANING_UP)


def succeed(run, summary):
    """The run measured what it was asked to: its summary is stored, each step's TPS with its 95 % interval from
    its own interval samples (runs/stats.py, batch means), and it is judged against its series."""
    return _end(run, RunState.SUCCEEDED, summary=with_intervals(run, summary))


def with_intervals(run, summary):
    """The summary with `tps_ci` (runs.stats.Interval as a dict, or None: too few samples) on each step and on the
    step at its top (the best step of a sweep)."""
    if not summary:
        return summary
    per_step = {}
    for step, tps in Sample.objects.filter(run=run, warmup=False).order_by("step", "t", "id").values_list("step", "tps"):
        per_step.setdefault(step, []).append(tps)

    def interval(step):
        found = stats.stability(per_step.get(step or 1, []))
        return found.as_dict() if found else None

    summary = {**summary, "tps_ci": interval(summary.get("step"))}
    if summary.get("steps"):
        summary["steps"] = [{**s, "tps_ci": interval(s.get("step"))} for s in summary["steps"]]
    return summary


def fail(run, reason, **fields):
    """The run failed, for `reason` (the target's secrets masked, whoever wrote it). `fields`: what else the
    failure records (the tables a dead run left behind). False when the run had already ended."""
    reason = TargetAccess.of(run.target).clean(str(reason))
    return _end(run, RunState.FAILED, reason=reason[:MAX_REASON_CHARS], **fields)


def cancel(run, user):
    """A queued run is cancelled at once; an active one is asked to stop (its worker stops the tool, cleans up and
    then calls finish_cancelled). Returns True if anything changed; False for a run that has ended."""
    reason = _("Cancelled by %(user)s before it started.") % {"user": user.get_username()}
    if _end(run, RunState.CANCELLED, allowed_from=[RunState.QUEUED], reason=reason):
        return True
    moved = Run.objects.filter(pk=run.pk, state__in=ACTIVE_STATES).update(cancel_requested=True)
    run.refresh_from_db()
    return bool(moved)


def finish_cancelled(run, reason, **fields):
    """The worker stopped a run whose cancel was asked for, and cleaned up (`fields`: the tables a cleanup could not
    drop)."""
    reason = TargetAccess.of(run.target).clean(str(reason))
    return _end(run, RunState.CANCELLED, reason=reason[:MAX_REASON_CHARS], **fields)


def _end(run, state, **fields):
    # One transaction: a reader never sees the final state without its judgement (the judgement keeps a savepoint
    # of its own, so its failure never takes the state back).
    with transaction.atomic():
        moved = run.transition(state, **fields)
        if moved:  # before the group's judgement: a retried run's group is not complete until its retry has ended
            retries.retry_once(run)
        if moved and run.repeat_group_id:
            # The group is one result: judged once all its runs have ended, however each one ended.
            history.record_group_judgement(run.repeat_group_id)
            run.refresh_from_db(fields=["regression", "trend"])
        elif moved and state == RunState.SUCCEEDED:
            history.record_judgement(run)
        if moved:  # webhooks, sent once this transaction commits
            webhooks.emit("run.finished", lambda: event_data(run))
            if run.regression:
                webhooks.emit("regression.found", lambda: {**event_data(run), "trend": run.trend})
    return moved


def event_data(run):
    """A run as webhook payloads carry it (no host, user or database: a receiver may be anywhere)."""
    run.refresh_from_db(fields=["state", "finished_at", "summary", "reason", "regression", "trend"])
    summary = run.summary or {}
    return {"run": run.pk, "state": run.state, "target": run.target.name, "profile": run.profile.slug,
            "tps": summary.get("tps"), "qps": summary.get("qps"), "reason": run.reason or "",
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "regression": run.regression, "repeat_group": run.repeat_group_id,
            "url": webhooks.absolute(reverse("v1:run-detail", kwargs={"pk": run.pk})),
            "html_url": webhooks.absolute(run.get_absolute_url())}



# --- a multi-client run's clients (runs/multiclient.py, runs/tasks.py) ------------------------------------------

def client_arrive(client, **where):
    """waiting -> arrived: a worker took client 2..N's message (`where`: host, cores, worker, worker_pid). False for a
    redelivered or duplicate message."""
    return client.transition(ClientState.ARRIVED, **where)


def client_ready(client, step_key, **where):
    """The client waits at the barrier for `step_key`, running (client 1 from waiting, the others once arrived)."""
    if client.state == ClientState.RUNNING:
        client.set(ready_for=step_key, **where)
        return True
    return client.transition(ClientState.RUNNING, ready_for=step_key, **where)


def client_end(client, state, reason=""):
    """A client's final state, with its reason (the target's secrets masked, clamped like a run's). False when the
    client had already ended."""
    assert state in (ClientState.DONE, ClientState.FAILED, ClientState.STOPPED)
    reason = TargetAccess.of(client.run.target).clean(str(reason))[:MAX_REASON_CHARS]
    return client.transition(state, reason=reason)


def stop_unstarted_clients(run):
    """Clients no worker took before the run ended are stopped, saying so."""
    return RunClient.objects.filter(run=run, state=ClientState.WAITING).update(
        state=ClientState.STOPPED, reason="It never started: no worker took it before the run ended.")
