"""Scheduled runs: a runs.Schedule is kept in step with a django-celery-beat PeriodicTask (crontab) that
Celery beat's database scheduler fires; each firing starts an ordinary run through launch_run with the
schedule as its origin. One place for the cron rule and for what a due time does."""

import json
import logging

from celery.schedules import crontab
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django_celery_beat.models import CrontabSchedule, PeriodicTask

from .models import Schedule
from .services import launch_run

log = logging.getLogger(__name__)
CRON_FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")


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


def schedule_errors(schedule):
    """{field: [messages]} for what is wrong with a schedule (Schedule.clean asks; forms, the API and the
    admin reach it through full_clean): the cron expression, an archived target, a profile of another
    engine or not runnable here, overrides the profile refuses."""
    errors = {}
    try:
        parse_cron(schedule.cron)
    except ValidationError as exc:
        errors.update(exc.message_dict)
    target = schedule.target if schedule.target_id else None
    profile = schedule.profile if schedule.profile_id else None
    if target is not None and target.archived_at:
        errors["target"] = [_("Target %(t)s is archived: it takes no new runs.") % {"t": target.name}]
    if not isinstance(schedule.overrides, dict):
        errors["overrides"] = [_("Write an object of field: value, e.g. {\"threads\": 8}.")]
    elif profile is not None:
        try:
            profile.resolve(schedule.overrides)
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                if field in ("profile", "overrides"):  # not runnable here; unknown override names
                    errors.setdefault(field, []).extend(messages)
                else:  # one override's value: named inside the overrides
                    errors.setdefault("overrides", []).extend(f"{field}: {m}" for m in messages)
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
    as the schedule's last_error. Returns the run id or None."""
    schedule = Schedule.objects.select_related("target", "profile", "created_by").filter(pk=schedule_id).first()
    if schedule is None or not schedule.enabled:
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
