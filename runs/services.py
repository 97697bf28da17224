"""Launching a run: validate, store the row, then queue the task once the row is committed."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from .models import Run
from .params import thread_steps


def launch_run(*, target, profile, overrides, user, reproduces=None, schedule=None):
    """The one place a run is validated and created (the form and the API only translate to and from it).
    Raises ValidationError {field: [messages]} naming every bad field, and then nothing is stored or
    queued; otherwise the run is saved and queued once the row is committed."""
    errors = {}
    if target.archived_at:
        errors["target"] = [_("Target %(t)s is archived: it takes no new runs.") % {"t": target.name}]
    if profile.engine != target.engine:
        errors["profile"] = [_("Profile %(p)s is for %(pe)s; target %(t)s is %(te)s.") % {
            "p": profile.slug, "pe": profile.get_engine_display(), "t": target.name, "te": target.get_engine_display()}]
    params = None
    try:
        params = profile.resolve(overrides)
    except ValidationError as exc:
        for field, messages in exc.message_dict.items():
            errors.setdefault(field, []).extend(messages)
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        run = Run.objects.create(target=target, profile=profile, overrides=overrides or {}, params=params,
                                 requested_by=user, reproduces=reproduces, schedule=schedule, step_count=len(thread_steps(params)))
        transaction.on_commit(lambda: enqueue(run))
    return run


def time_limit_for(run):
    steps = len(thread_steps(run.params))
    margin = settings.RUNS_TIME_MARGIN_SECONDS
    return run.expected_seconds + steps * margin + 2 * settings.RUNS_PREPARE_TIME_LIMIT_SECONDS + 60


def enqueue(run):
    from .tasks import run_benchmark

    run_benchmark.apply_async(args=[run.pk], queue=run.target.queue, time_limit=time_limit_for(run))
