"""Schedules: staff schedule a profile on a target through the page; Celery beat (a real `celery beat`
process with django-celery-beat's database scheduler) fires it when it is due and a real worker runs
it as an ordinary run with the schedule as origin. A schedule whose runs keep failing says so; only staff
schedule; a bad cron expression is refused naming the field."""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from runs.models import BenchmarkProfile, Run, RunState, Schedule, Target

from testbed.runs_support import (
    ROOT, make_targets, make_user, stop_worker, wait_final, wait_for, worker_env,
)
from testbed.runs_support import seed_profiles_for_tests


def start_beat():
    pidfile = Path(os.environ.get("TMPDIR", "/tmp")) / f"beat-{os.getpid()}.pid"
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "celery"), "-A", "config", "beat", "-S", "django_celery_beat.schedulers:DatabaseScheduler",
         "--max-interval", "2", "--pidfile", str(pidfile), "-l", "INFO"],
        cwd=ROOT, env=worker_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


@pytest.mark.django_db(transaction=True)
def test_a_schedule_due_in_the_window_starts_a_run_through_celery_beat(committed, worker, client):
    staff = make_user("sched-staff", staff=True)
    target = make_targets()["postgresql"]
    profile = BenchmarkProfile.objects.get(slug="pgbench-ro-quick")
    # A due time two minutes ago, last fired yesterday: beat's crontab finds it due at its first tick, once,
    # as it would at the wall-clock minute (no waiting for the next minute; the crontab path is the real one).
    due = timezone.localtime() - timedelta(minutes=2)
    client.force_login(staff)
    response = client.post("/runs/schedules/new/", {"name": "nightly-ro", "target": target.pk, "profile": profile.pk,
                                                    "cron": f"{due.minute} {due.hour} * * *", "enabled": "on",
                                                    "overrides": '{"threads": 1}'})
    assert response.status_code == 302, response.content.decode()[:3000]
    schedule = Schedule.objects.get(name="nightly-ro")
    assert schedule.periodic_task.task == "runs.scheduled_run" and schedule.periodic_task.crontab.minute == str(due.minute)
    PeriodicTask.objects.filter(pk=schedule.periodic_task_id).update(last_run_at=timezone.now() - timedelta(hours=23))
    beat = start_beat()
    try:
        run = wait_for(lambda: Run.objects.filter(schedule=schedule).first(), timeout=60, interval=0.5,
                       message="beat to start the scheduled run")
        run = wait_final(run.pk, timeout=120)  # beat keeps ticking (every 2 s at most) while the run runs
    finally:
        stop_worker(beat)
    assert run.state == RunState.SUCCEEDED, run.reason
    # An ordinary run: the schedule's profile, target and overrides, requested by the schedule's author.
    assert (run.target_id, run.profile_id, run.overrides, run.params["threads"], run.requested_by_id) == (
        target.pk, profile.pk, {"threads": 1}, 1, staff.pk)
    assert Run.objects.filter(schedule=schedule).count() == 1  # fired once, not every beat tick
    page = client.get("/runs/schedules/").content.decode()
    assert f"#{run.pk} " in page and "keeps-failing" not in page
    assert f'href="/runs/schedules/{schedule.pk}/"' in page
    assert 'id="run-origin"' in client.get(f"/runs/{run.pk}/").content.decode()


@pytest.mark.django_db
def test_a_schedule_whose_runs_keep_failing_says_so_and_only_staff_schedule(client):
    seed_profiles_for_tests()
    staff, operator = make_user("sched-staff2", staff=True), make_user("sched-op", operator=True)
    target = Target.objects.create(name="pg", engine="postgresql", host="127.0.0.1", port=5432, database="db", user="u")
    profile = BenchmarkProfile.objects.get(slug="pgbench-ro-quick")
    client.force_login(operator)
    assert client.get("/runs/schedules/new/").status_code == 403
    assert client.get("/runs/schedules/").status_code == 200
    client.force_login(staff)
    bad = client.post("/runs/schedules/new/", {"name": "x", "target": target.pk, "profile": profile.pk, "cron": "61 * * * *",
                                               "overrides": '{"threads": 0}'})
    assert bad.status_code == 200 and not Schedule.objects.exists()
    errors = bad.context["form"].errors
    assert "cron" in errors and "overrides" in errors
    ok = client.post("/runs/schedules/new/", {"name": "hourly", "target": target.pk, "profile": profile.pk, "cron": "0 * * * *",
                                              "enabled": "on", "overrides": "{}"})
    assert ok.status_code == 302
    schedule = Schedule.objects.get()
    for i, state in enumerate([RunState.SUCCEEDED, RunState.FAILED, RunState.FAILED]):
        Run.objects.create(target=target, profile=profile, params=profile.resolve({}), state=state, schedule=schedule,
                           reason="connection refused" if state == RunState.FAILED else "")
    page = client.get("/runs/schedules/").content.decode()
    assert "keeps-failing" not in page  # 2 of the last 3 failed
    Run.objects.create(target=target, profile=profile, params=profile.resolve({}), state=RunState.FAILED, schedule=schedule)
    page = client.get("/runs/schedules/").content.decode()
    assert "keeps-failing" in page  # the last 3 all failed


@pytest.mark.django_db(transaction=True)
def test_a_schedule_whose_real_runs_keep_failing_says_so_everywhere(committed, worker, client):
    """Three due times (the task beat fires, sent through the broker to the real worker) of a schedule whose
    target refuses connections: three real failed runs, and the schedule says it keeps failing on its page
    and in the API; each run's export names the schedule as its origin. Then the target is archived: the
    next due time starts no run and says why."""
    from rest_framework.test import APIClient

    from runs.schedules import save_schedule
    from runs.tasks import scheduled_run

    staff = make_user("sched-failing-staff", staff=True)
    target = make_targets()["postgresql"]
    target.port = 9  # discard: nothing listens, the connection is refused
    target.save()
    schedule = save_schedule(Schedule(name="broken", target=target, profile=BenchmarkProfile.objects.get(slug="pgbench-ro-quick"),
                                      cron="0 3 * * *", created_by=staff))
    api = APIClient()
    api.force_authenticate(staff)
    runs = []
    for due in range(3):
        scheduled_run.apply_async(args=[schedule.pk], queue="celery")
        run = wait_for(lambda: Run.objects.filter(schedule=schedule).exclude(pk__in=[r.pk for r in runs]).first(), timeout=60,
                       message=f"due time {due + 1} to start a run")
        runs.append(wait_final(run.pk, timeout=120))
        assert runs[-1].state == RunState.FAILED and "Cannot connect" in runs[-1].reason
        body = api.get(f"/api/v1/schedules/{schedule.pk}/").json()
        assert body["keeps_failing"] is (due == 2), body  # only once its last 3 runs all failed
    client.force_login(staff)
    row = client.get("/runs/schedules/").content.decode().split(f'data-schedule="{schedule.pk}"')[1].split("</tr>")[0]
    assert "keeps-failing" in row and all(f"#{r.pk} " in row for r in runs)
    assert [r["state"] for r in body["recent_runs"]] == ["failed"] * 3
    record = api.get(f"/api/v1/runs/{runs[0].pk}/export/").json()
    assert record["origin"]["schedule"] == {"id": schedule.pk, "name": "broken", "cron": "0 3 * * *", "repeats": 1}
    assert record["regression"]["regression"] is None and record["series"]["runs"] == []  # failed runs form no series

    target.archived_at = timezone.now()
    target.save()
    scheduled_run.apply_async(args=[schedule.pk], queue="celery")
    schedule = wait_for(lambda: Schedule.objects.filter(pk=schedule.pk).exclude(last_error="").first(), timeout=60,
                        message="the refused due time to be recorded")
    assert "archived" in schedule.last_error and Run.objects.filter(schedule=schedule).count() == 3
    assert "archived" in api.get(f"/api/v1/schedules/{schedule.pk}/").json()["last_error"]
