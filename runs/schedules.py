"""Scheduled runs: a runs.Schedule is kept in step with a django-celery-beat PeriodicTask (crontab) that
Celery beat's database scheduler fires; each firing starts an ordinary run through launch_run with the
schedule as its origin. One place for the cron rule and for what a due time does."""

import json
import logging

from celery.schedules import crontab
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django_celery_beat.models import CrontabSchedule, PeriodicTask

from .models import ACTIVE_STATES, RunState, Schedule
from .params import expected_seconds
from .services import launch_run

log = logging.getLogger(__name__)
CRON_FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")
SCHEDULE_SKIPS_KEPT = 10
# How far ahead the shortest gap between due times is looked for: a year and a bit covers every pattern of
# months and weekdays (a 29 February only schedule is years apart anyway).
PERIOD_HORIZON_DAYS = 400


def parse_cron(expression):
    """'m h dom mon dow' -> the crontab fields, checked by Celery's own parser. ValidationError names `cron`."""
    parts = (expression or "").split()
    if len(parts) != 5:
        raise ValidationError({"cron": [_("Give five fields: minute hour day-of-month month day-of-week (e.g. '0 3 * * *').")]})
    fields = dict(zip(CRON_FIELDS, parts))
    try:
        crontab(**fields)
    except (ValueError, TypeError) as exc:
        raise ValidationError({"cron": [_("Not a valid cron expression: %(error)s") % {"error": exc}]}) from None
    return fields


def shortest_period(fields, start=None):
    """The shortest time in seconds between two due times of a cron (celery's crontab: the day must match the
    day of month, the month and the weekday, all of them), over the next PERIOD_HORIZON_DAYS; None with fewer
    than two due times."""
    import datetime

    cron = crontab(**fields)
    times = sorted(h * 60 + m for h in cron.hour for m in cron.minute)  # minutes of a due day
    start = start or datetime.date.today()
    days = [n for n in range(PERIOD_HORIZON_DAYS)
            if (d := start + datetime.timedelta(days=n)).month in cron.month_of_year and d.day in cron.day_of_month
            and d.isoweekday() % 7 in cron.day_of_week]
    gaps = [b - a for a, b in zip(times, times[1:])] if days else []
    gaps += [(b - a) * 1440 + times[0] - times[-1] for a, b in zip(days, days[1:])]
    return min(gaps) * 60 if gaps else None


def run_seconds(schedule, params):
    """How long one due time's runs measure: each run's steps x (warm-up + duration), times the repeats."""
    return expected_seconds(params) * (schedule.repeats or 1)


def schedule_errors(schedule):
    """{field: [messages]} for what is wrong with a schedule (Schedule.clean asks; forms, the API and the
    admin reach it through full_clean): the cron expression, an archived target, a profile of another
    engine or not runnable here, overrides the profile refuses."""
    errors = {}
    try:
        fields = parse_cron(schedule.cron)
    except ValidationError as exc:
        errors.update(exc.message_dict)
        fields = None
    target = schedule.target if schedule.target_id else None
    profile = schedule.profile if schedule.profile_id else None
    if target is not None and target.archived_at:
        errors["target"] = [_("Target %(t)s is archived: it takes no new runs.") % {"t": target.name}]
    if not isinstance(schedule.overrides, dict):
        errors["overrides"] = [_("Write an object of field: value, e.g. {\"threads\": 8}.")]
    elif profile is not None:
        try:
            params = profile.resolve(schedule.overrides)
        except ValidationError as exc:
            params = None
            for field, messages in exc.message_dict.items():
                if field in ("profile", "overrides"):  # not runnable here; unknown override names
                    errors.setdefault(field, []).extend(messages)
                else:  # one override's value: named inside the overrides
                    errors.setdefault("overrides", []).extend(f"{field}: {m}" for m in messages)
        period = shortest_period(fields) if fields and params else None
        if period is not None and isinstance(schedule.repeats, int) and period < (needed := run_seconds(schedule, params)):
            # A due time while the last one's runs still go would only be skipped (start_scheduled_run).
            errors.setdefault("cron", []).append(_(
                "Its due times come as little as %(period)s s apart, but each due time's runs take %(needed)s s "
                "(steps x (warm-up + duration) x repeats): choose a longer period or shorter runs.") % {
                "period": period, "needed": needed})
        if target is not None and profile.engine != target.engine:
            errors.setdefault("profile", []).append(_("This profile is for %(engine)s; the target is %(te)s.") % {
                "engine": profile.get_engine_display(), "te": target.get_engine_display()})
    return errors


@transaction.atomic
def save_schedule(schedule):
    """Validate and save the schedule and its beat entry (crontab in the server's time zone, task
    runs.scheduled_run). Raises ValidationError naming each bad field; then nothing is written."""
    schedule.full_clean(exclude=["periodic_task", "created_by"])
    fields = parse_cron(schedule.cron)
    from django.conf import settings

    cron, _created = CrontabSchedule.objects.get_or_create(timezone=settings.TIME_ZONE, **fields)
    schedule.save()
    task = schedule.periodic_task or PeriodicTask(name=f"runs-schedule-{schedule.pk}", task="runs.scheduled_run")
    task.crontab, task.args, task.enabled, task.queue = cron, json.dumps([schedule.pk]), schedule.enabled, "celery"
    task.description = f"{schedule.profile.slug} on {schedule.target.name}"
    task.save()
    if schedule.periodic_task_id != task.pk:
        schedule.periodic_task = task
        schedule.save(update_fields=["periodic_task"])
    return schedule


def set_enabled(schedule, enabled):
    """Pause (False) or resume (True) a schedule: beat skips a paused one."""
    schedule.enabled = enabled
    return save_schedule(schedule)


def delete_schedule(schedule):
    """Delete the schedule; its beat entry goes with it (models._drop_beat_entry); its runs stay, without origin."""
    with transaction.atomic():
        schedule.delete()


def start_scheduled_run(schedule_id):
    """What a due time does: an ordinary run of the schedule's profile on its target, requested by the
    schedule's author, with the schedule as origin. A refused run (archived target, bad overrides) is kept
    as the schedule's last_error. While the schedule's previous run is still queued or running the due time is
    skipped and kept in its `skips` (schedules never pile up). Returns the run id or None."""
    with transaction.atomic():  # one firing at a time per schedule decides whether the previous run still goes
        schedule = (Schedule.objects.select_for_update(of=("self",)).select_related("target", "profile", "created_by")
                    .filter(pk=schedule_id).first())
        if schedule is None or not schedule.enabled:
            return None
        going = schedule.runs.filter(state__in=[RunState.QUEUED, *ACTIVE_STATES]).order_by("created_at", "id").first()
        if going is not None:
            skip = {"at": timezone.now().isoformat(timespec="seconds"), "run": going.pk, "state": going.state}
            Schedule.objects.filter(pk=schedule.pk).update(skips=[skip, *schedule.skips][:SCHEDULE_SKIPS_KEPT])
            log.info("schedule %s skipped a due time: run %s is still %s", schedule.pk, going.pk, going.state)
            return None
    try:
        run = launch_run(target=schedule.target, profile=schedule.profile, overrides=schedule.overrides,
                         user=schedule.created_by, schedule=schedule, repeats=schedule.repeats)
    except ValidationError as exc:
        reason = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())
        Schedule.objects.filter(pk=schedule.pk).update(last_error=reason)
        log.warning("schedule %s started no run: %s", schedule.pk, reason)
        return None
    if schedule.last_error:
        Schedule.objects.filter(pk=schedule.pk).update(last_error="")
    return run.pk
