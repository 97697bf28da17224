"""Launching a run: validate, store the row, then queue the task once the row is committed.

The row is the source of truth, the broker message only a wake-up call: if the broker cannot be reached
at launch, the run stays queued and the reconciler (runs/reconciler.py) sends its message later,
exactly as for a message lost with a flushed broker (runs/dispatch.py)."""

import random
import uuid

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from .addresses import names_unspecified
from .clients import pool_limit
from .dispatch import enqueue, workers_consuming
from .footprint import confirmation_error, estimate, needs_confirmation
from .models import (
    DEFAULT_INTERLEAVED_REPEATS,
    MAX_INTERLEAVED,
    MAX_REPEATS,
    MIN_INTERLEAVED,
    RepeatGroup,
    Run,
    host_refusal,
)
from .params import ascii_int, client_count, step_count, typed_overrides


def parse_repeats(value, errors):
    """How many runs of the set-up a launch asks for: a whole number from 1 to MAX_REPEATS (empty: 1)."""
    if value in (None, ""):
        return 1
    try:
        number = ascii_int(value)
    except ValueError:
        number = None
    if number is None or not 1 <= number <= MAX_REPEATS:
        errors["repeats"] = [_("repeats must be a whole number from 1 to %(max)s, got %(value)s.") % {
            "max": MAX_REPEATS, "value": str(value)[:40]}]
        return None
    return number


def validate_launch(*, target, profile, overrides, reproduces=None, repeats=1, confirm=False):
    """The checks of one set-up's launch: (params, repeats, errors {field: [messages]}); nothing is stored."""
    errors = {}
    repeats = parse_repeats(repeats, errors)
    if target.archived_at:
        errors["target"] = [_("Target %(t)s is archived: it takes no new runs.") % {"t": target.name}]
    elif names_unspecified(target.host, target.port):  # stored before Target.clean refused it
        errors["target"] = [_("Target %(t)s: %(why)s") % {"t": target.name, "why": host_refusal(target.host)}]
    if profile.engine != target.engine:
        errors["profile"] = [_("Profile %(p)s is for %(pe)s; target %(t)s is %(te)s.") % {
            "p": profile.slug, "pe": profile.get_engine_display(), "t": target.name, "te": target.get_engine_display()}]
    if reproduces is not None and reproduces.engine_version.engine.slug != target.engine:
        errors["reproduces"] = [_("The published row %(id)s is for %(engine)s; target %(t)s is %(te)s.") % {
            "id": reproduces.pk, "engine": reproduces.engine_version.engine.slug, "t": target.name, "te": target.get_engine_display()}]
    params = None
    try:
        params = profile.resolve(overrides)
    except ValidationError as exc:
        for field, messages in exc.message_dict.items():
            errors.setdefault(field, []).extend(messages)
    if params and client_count(params) > (limit := pool_limit(target.queue)):
        errors["client_hosts"] = [_("client_hosts (%(n)s) exceeds the limit of pool \"%(queue)s\" (%(limit)s client hosts).") % {
            "n": client_count(params), "queue": target.queue, "limit": limit}]
    if params and "client_hosts" not in errors and client_count(params) > 1:
        available = workers_consuming(target.queue)
        if available is not None and client_count(params) > available:
            # Refused now rather than failed RUNS_CLIENT_ARRIVAL_SECONDS later for a client no worker can take.
            errors["client_hosts"] = [_("client_hosts (%(n)s) is more than the benchmark workers consuming queue "
                                        "\"%(queue)s\" now (%(workers)s): each client host needs a worker of its own. "
                                        "Start more workers with -Q %(queue)s or ask for fewer client hosts.") % {
                "n": client_count(params), "queue": target.queue, "workers": available}]
    if params and not errors and not confirm and needs_confirmation(found := estimate(params, repeats)):
        errors["confirm"] = [confirmation_error(found)]
    return params, repeats, errors


def launch_run(*, target, profile, overrides, user, reproduces=None, schedule=None, repeats=1, confirm=False):
    """The one place a run is validated and created (the form and the API only translate to and from it).
    Raises ValidationError {field: [messages]} naming every bad field, and then nothing is stored or
    queued; otherwise the run is saved and queued once the row is committed.

    repeats=N (N > 1) creates N ordinary runs of the same set-up in one repeat group, queued in order:
    the one-active-run-per-target rule runs them one after another. Returns the first of them.

    A run that loads or takes much (runs/footprint.py: a whitepaper profile as published) is refused, naming
    `confirm` and saying its rows, disk and time, unless confirm is true."""
    params, repeats, errors = validate_launch(target=target, profile=profile, overrides=overrides, reproduces=reproduces,
                                              repeats=repeats, confirm=confirm)
    if errors:
        raise ValidationError(errors)
    overrides = typed_overrides(profile, overrides)  # stored typed whatever sent them (the form sends text)
    with transaction.atomic():
        group = RepeatGroup.objects.create(count=repeats) if repeats > 1 else None
        runs = [Run.objects.create(target=target, profile=profile, overrides=overrides, params=params,
                                   requested_by=user, reproduces=reproduces, schedule=schedule,
                                   step_count=step_count(params), repeat_group=group,
                                   repeat_index=index if group else None)
                for index in range(1, repeats + 1)]
        transaction.on_commit(lambda: [enqueue(run) for run in runs])
    return runs[0]


def launch_interleaved(setups, *, user, repeats=DEFAULT_INTERLEAVED_REPEATS, confirm=False, rng=None):
    """An interleaved comparison (issue 46): 2 to MAX_INTERLEAVED set-ups, each a dict of target, profile and
    overrides, `repeats` runs each, in randomized blocks: block b (from 1) runs every set-up once, in a shuffled
    order, so that a drift of the machine's load falls on every set-up. Each set-up is a repeat group of its own,
    the groups share one `launch`, and each run keeps its block (Run.block): the verdict pairs the set-ups' runs
    block by block (runs/stats.py). Runs are created, and queued, block after block: on one target the queue
    runs them in that order. Errors name the field: the baseline's (setups[0]) by its own name, a further set-up's
    as "interleave.<i>.<field>" (i from 0, as the API's list of further set-ups).
    Returns the groups, in the order of `setups`."""
    errors, resolved = {}, []
    if not MIN_INTERLEAVED <= len(setups) <= MAX_INTERLEAVED:
        raise ValidationError({"interleave": [_("Give between %(min)d and %(max)d further set-ups (got %(n)d).") % {
            "min": MIN_INTERLEAVED - 1, "max": MAX_INTERLEAVED - 1, "n": len(setups) - 1}]})
    count = parse_repeats(repeats, errors)
    if count is not None and count < 2:
        errors["repeats"] = [_("An interleaved comparison needs at least 2 repeats per set-up (got %(n)s): one run of each "
                               "says nothing about the spread between runs.") % {"n": count}]
    if errors:
        raise ValidationError(errors)
    for index, setup in enumerate(setups):
        params, _count, found = validate_launch(target=setup["target"], profile=setup["profile"],
                                                overrides=setup.get("overrides") or {}, repeats=count, confirm=confirm)
        for field, messages in found.items():
            # The baseline's fields by their own names; a further set-up's as the API names a list item's field.
            key = field if index == 0 or field in ("confirm", "repeats") else f"interleave.{index - 1}.{field}"
            errors.setdefault(key, []).extend(messages)
        resolved.append(params)
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        return queue_blocks(setups, resolved, count, user=user, rng=rng)


def queue_blocks(setups, resolved, count, *, user, rng=None):
    """Store validated set-ups (`resolved`: each one's params) as repeat groups sharing one launch id, `count` runs
    each in randomized blocks, and queue the runs once committed; call inside a transaction. Used by
    launch_interleaved and by a campaign's launch (runs/campaigns.py), whose rounds are these blocks."""
    rng = rng or random.SystemRandom()
    launch = uuid.uuid4().hex
    groups = [RepeatGroup.objects.create(count=count, launch=launch, position=i) for i in range(len(setups))]
    runs = []
    for block in range(1, count + 1):
        order = list(range(len(setups)))
        rng.shuffle(order)
        for i in order:
            setup, params = setups[i], resolved[i]
            runs.append(Run.objects.create(
                target=setup["target"], profile=setup["profile"],
                overrides=typed_overrides(setup["profile"], setup.get("overrides") or {}), params=params,
                requested_by=user, step_count=step_count(params), repeat_group=groups[i], repeat_index=block,
                block=block))
    transaction.on_commit(lambda: [enqueue(run) for run in runs])
    return groups


def profile_in_use(profile):
    """Why the profile may not be deleted ("" when it may): runs and schedules name it (Run.profile and
    Schedule.profile protect it), and a run's record and a series are read through their profile."""
    runs, schedules = profile.runs.count(), profile.schedules.count()
    if not runs and not schedules:
        return ""
    return _("Profile %(slug)s is used by %(runs)s run(s) and %(schedules)s schedule(s): it stays, as their record "
             "needs it.") % {"slug": profile.slug, "runs": runs, "schedules": schedules}
