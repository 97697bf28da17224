"""Campaigns (issue 47): one profile over several targets, each target a cell measured as a series.

No second engine: a campaign's launch validates every cell as one run's launch is validated
(runs/services.py validate_launch) and stores the cells as the repeat groups of one interleaved launch
(queue_blocks): round r is block r, every cell once in a shuffled order, so that a drift of the machine falls on
every target. The queue, the one-run-per-target rule, the reconciler and the verdict rule (runs/stats.py) then
treat its runs as any others. A campaign's state is derived from its runs' states, never stored."""

import random

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone
from django.utils.translation import gettext as _

from . import actions
from .dispatch import enqueue
from .footprint import confirmation_error, estimate, needs_confirmation
from .params import expected_seconds
from .models import ACTIVE_STATES, MIN_CAMPAIGN_REPEATS, Campaign, CampaignCell, Run, RunState
from .services import parse_repeats, queue_blocks, typed_overrides, validate_launch
from .stats import series

MAX_CAMPAIGN_TARGETS = 40
TARGET_FIELDS = ("target", "profile", "client_hosts")  # validate_launch's errors that depend on the target


def launch_campaign(*, name, profile, overrides, targets, user, repeats, reference=None, confirm=False, rng=None,
                    estimate_only=False):
    """Validate and store a campaign, its cells and their runs, queued once committed. Raises ValidationError
    {field: [messages]} naming every bad field (a target's as "targets.<i>.<field>"), and then nothing is stored.
    The footprint asked to confirm is the whole campaign's (every cell's runs). estimate_only: validate, store
    nothing, and return that footprint (runs/footprint.py estimate) for the form to show before launching."""
    errors = {}
    name = (name or "").strip()
    if not name:
        errors["name"] = [_("Give the campaign a name.")]
    elif len(name) > Campaign._meta.get_field("name").max_length:
        errors["name"] = [_("The name is longer than %(max)d characters.") % {"max": Campaign._meta.get_field("name").max_length}]
    count = parse_repeats(repeats, errors)
    if count is not None and count < MIN_CAMPAIGN_REPEATS:
        errors["repeats"] = [_("A campaign needs at least %(min)d repeats per cell (got %(n)s): one run says nothing "
                               "about the spread between runs.") % {"min": MIN_CAMPAIGN_REPEATS, "n": count}]
    if not targets:
        errors["targets"] = [_("Choose at least one target.")]
    elif len(targets) > MAX_CAMPAIGN_TARGETS:
        errors["targets"] = [_("A campaign takes at most %(max)d targets (got %(n)d).") % {
            "max": MAX_CAMPAIGN_TARGETS, "n": len(targets)}]
    elif len({t.pk for t in targets}) < len(targets):
        errors["targets"] = [_("A target is named twice: each target is one cell.")]
    if errors:
        raise ValidationError(errors)
    resolved = []
    for index, target in enumerate(targets):
        # confirm=True here: the footprint to confirm is the campaign's, checked below over every cell.
        params, _count, found = validate_launch(target=target, profile=profile, overrides=overrides or {},
                                                repeats=count, confirm=True)
        for field, messages in found.items():
            # What depends on the target by its place in the list; the profile's and overrides' errors (the same
            # for every target) once, by their own names.
            key = f"targets.{index}.{field}" if field in TARGET_FIELDS else field
            errors.setdefault(key, [])
            errors[key].extend(m for m in messages if m not in errors[key])
        resolved.append(params)
    found = None if errors else estimate(resolved[0], count * len(targets))
    if found and not confirm and not estimate_only and needs_confirmation(found):
        errors["confirm"] = [confirmation_error(found)]
    if errors:
        raise ValidationError(errors)
    if estimate_only:
        return found
    setups = [{"target": t, "profile": profile, "overrides": overrides or {}} for t in targets]
    with transaction.atomic():
        groups = queue_blocks(setups, resolved, count, user=user, rng=rng or random.SystemRandom())
        # Stored typed whatever sent them (the form sends text), as each run's are (queue_blocks).
        campaign = Campaign.objects.create(name=name, profile=profile, overrides=typed_overrides(profile, overrides or {}),
                                           repeats=count,
                                           reference=reference, launch=groups[0].launch, created_by=user)
        CampaignCell.objects.bulk_create(
            CampaignCell(campaign=campaign, position=i, target=t, repeat_group=g, engine_version=t.server_version,
                         family=t.family, vcpus=t.vcpus, memory_gb=t.memory_gb)
            for i, (t, g) in enumerate(zip(targets, groups)))
    return campaign


def campaign_state(run_states, paused=False):
    """A campaign's state from its runs' states: queued (none started), running, paused (runs left to start, held),
    finished (every run ended, none cancelled) or cancelled (every run ended, some cancelled). A paused campaign's
    active runs finish: it reads "paused" once a run is held."""
    states = list(run_states)
    if paused and RunState.QUEUED in states:
        return "paused"
    if any(s in ACTIVE_STATES for s in states):
        return "running"
    if any(s == RunState.QUEUED for s in states):
        ended = [s for s in states if s != RunState.QUEUED]
        return "running" if ended else "queued"
    return "cancelled" if RunState.CANCELLED in states else "finished"


def runs_of(campaign):
    return Run.objects.filter(repeat_group__campaign_cell__campaign=campaign)


def state_of_cells(campaign, found):
    """The campaign's state from its cells as cells() gives them (each round's latest attempt)."""
    return campaign_state((run.state for cell in found for run in cell.rounds.values()),
                          paused=campaign.paused_at is not None)


def state_of(campaign):
    return campaign_state(runs_of(campaign).values_list("state", flat=True), paused=campaign.paused_at is not None)


def pause_campaign(campaign):
    """Hold the campaign's queued runs (Run.held: no worker claims them, they keep no place in their target's queue);
    its active runs finish. False when it was already paused or has nothing left to start."""
    with transaction.atomic():
        if not Campaign.objects.filter(pk=campaign.pk, paused_at__isnull=True).update(paused_at=timezone.now()):
            campaign.refresh_from_db(fields=["paused_at"])
            return False
        held = runs_of(campaign).filter(state=RunState.QUEUED).update(held=True)
        if not held:
            transaction.set_rollback(True)
    campaign.refresh_from_db(fields=["paused_at"])
    return bool(held)


def resume_campaign(campaign):
    """Release the held runs and send their messages once committed (the round order stays: a run's place in its
    target's queue is its creation). False when the campaign was not paused."""
    with transaction.atomic():
        if not Campaign.objects.filter(pk=campaign.pk, paused_at__isnull=False).update(paused_at=None):
            campaign.refresh_from_db(fields=["paused_at"])
            return False
        released = list(runs_of(campaign).filter(state=RunState.QUEUED, held=True).select_related("target"))
        Run.objects.filter(pk__in=[r.pk for r in released]).update(held=False)
        transaction.on_commit(lambda: [enqueue(run) for run in released])
    campaign.refresh_from_db(fields=["paused_at"])
    return True


def cancel_campaign(campaign, user):
    """Cancel what the campaign has not finished, through the run's own action (runs/actions.py cancel): its queued
    runs at once, the later rounds first so that the queue starts none of them meanwhile, then its active runs are
    asked to stop. Finished runs are kept. Returns how many runs changed."""
    pending = list(runs_of(campaign).filter(state=RunState.QUEUED).order_by("-block", "-pk"))
    pending += list(runs_of(campaign).filter(state__in=ACTIVE_STATES))
    return sum(1 for run in pending if actions.cancel(run, user))


def cell_runs():
    """What a cell's page and API read of its runs (one query for every cell of every campaign asked)."""
    return Prefetch("repeat_group__runs", queryset=Run.objects.only(
        "pk", "state", "block", "summary", "disturbed", "repeat_group_id", "retry_of_id"))


def with_cells(campaigns):
    """Campaigns with their cells, targets and runs fetched in four queries however many there are (the API's list)."""
    return campaigns.prefetch_related(Prefetch("cells", queryset=CampaignCell.objects.select_related("target")
                                               .prefetch_related(cell_runs())))


def cells(campaign):
    """Each cell of the campaign with its runs by round ({round: run}) and its series (runs/stats.py series over
    the TPS of its succeeded, undisturbed runs; None before one has). Three queries whatever the campaign's size, none
    for a campaign fetched with_cells."""
    if "cells" in getattr(campaign, "_prefetched_objects_cache", {}):
        found = list(campaign.cells.all())
    else:
        found = list(campaign.cells.select_related("target").prefetch_related(cell_runs()))
    for cell in found:
        runs = sorted(cell.repeat_group.runs.all(), key=lambda r: r.pk)
        cell.rounds = {r.block: r for r in runs}  # a round's latest attempt: its retry, if it had one
        cell.retried = {r.block: r for r in runs if r.retry_of_id}  # round -> the retry (runs/retries.py)
        cell.series = series((r.summary or {}).get("tps") for r in runs
                             if r.state == RunState.SUCCEEDED and not r.disturbed)
        cell.state = campaign_state((r.state for r in runs), paused=campaign.paused_at is not None)
    return found


def time_left(campaign):
    """An estimate of the seconds until the campaign's last run ends, or None once nothing is left: per server and
    database (its runs go one at a time; different ones side by side), the runs not yet ended times the mean duration
    of the campaign's finished runs there (their measured steps before any has finished: set-up not counted), the
    longest of those. One query."""
    rows = list(runs_of(campaign).values_list("database_key", "state", "params", "started_at", "finished_at"))
    pending, taken = {}, {}
    for key, state, params, started, finished in rows:
        if state in ACTIVE_STATES or state == RunState.QUEUED:
            pending.setdefault(key, []).append(params)
        elif started and finished and state == RunState.SUCCEEDED:
            taken.setdefault(key, []).append((finished - started).total_seconds())
    if not pending:
        return None
    every = [t for durations in taken.values() for t in durations]
    left = []
    for key, params in pending.items():
        seen = taken.get(key) or every
        left.append(sum(sum(seen) / len(seen) if seen else expected_seconds(p) for p in params))
    return int(max(left))
