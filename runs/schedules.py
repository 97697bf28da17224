"""Scheduled runs: a runs.Schedule is kept in step with a django-celery-beat PeriodicTask (crontab) that
Celery beat's database scheduler fires; each firing starts an ordinary run through launch_run with the
schedule as its origin. One place for what a due time does; the rules a schedule must meet are runs/cron.py's."""

import json
import logging

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django_celery_beat.models import CrontabSchedule, PeriodicTask

from .cron import parse_cron
from .models import ACTIVE_STATES, RunState, Schedule
from .services import launch_run

log = logging.getLogger(__name__)
SCHEDULE_SKIPS_KEPT = 10


@transaction.atomic
def save_schedule(schedule):
    """Validate and save the schedule and its beat entry (crontab in the server's time zone, task
    runs.scheduled_run). Raises ValidationError naming each bad field; then nothing is written."""
    schedule.full_clean(exclude=["periodic_task", "created_by"])
    fields = parse_cron(schedule.cron)
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
                         user=schedule.created_by, schedule=schedule, repeats=schedule.repeats,
                         confirm=schedule.large_run_confirmed)  # its author confirmed a large set-up when saving it
    except ValidationError as exc:
        reason = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())
        Schedule.objects.filter(pk=schedule.pk).update(last_error=reason)
        log.warning("schedule %s started no run: %s", schedule.pk, reason)
        return None
    if schedule.last_error:
        Schedule.objects.filter(pk=schedule.pk).update(last_error="")
    return run.pk
