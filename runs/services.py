"""Launching a run: validate, store the row, then queue the task once the row is committed."""

from django.conf import settings
from django.db import transaction

from .models import Run


def launch_run(*, target, profile, overrides, user, reproduces=None):
    """Creates a queued Run (raises ValidationError naming the bad field; nothing is queued then)."""
    from django.core.exceptions import ValidationError
    from django.utils.translation import gettext as _

    if profile.engine != target.engine:
        raise ValidationError({"profile": _("Profile %(p)s is for %(pe)s; target %(t)s is %(te)s.") % {
            "p": profile.slug, "pe": profile.get_engine_display(), "t": target.name, "te": target.get_engine_display()}})
    params = profile.resolve(overrides)
    run = Run.objects.create(target=target, profile=profile, overrides=overrides or {}, params=params,
                             requested_by=user, reproduces=reproduces,
                             step_count=len(params.get("thread_sweep") or [params["threads"]]))
    transaction.on_commit(lambda: enqueue(run))
    return run


def time_limit_for(run):
    steps = len(run.params.get("thread_sweep") or [run.params["threads"]])
    margin = settings.RUNS_TIME_MARGIN_SECONDS
    return run.expected_seconds + steps * margin + 2 * settings.RUNS_PREPARE_TIME_LIMIT_SECONDS + 60


def enqueue(run):
    from .tasks import run_benchmark

    run_benchmark.apply_async(args=[run.pk], queue=run.target.queue, time_limit=time_limit_for(run))
