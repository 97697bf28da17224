"""Schedules through the API, the page and the admin: staff list, create, change, pause, resume and delete
them; operators only read; bad input is one 400 naming each field and stores nothing; the beat entry
(django-celery-beat's PeriodicTask) follows every change and goes with the schedule, however it is
deleted; the schedule's runs stay."""

import re
from pathlib import Path

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask
from rest_framework.test import APIClient

from runs.models import BenchmarkProfile, Run, RunState, Schedule, Target

from testbed.runs_support import make_user
from testbed.runs_support import seed_profiles_for_tests

ROOT = Path(__file__).resolve().parent.parent
API = "/api/v1/schedules/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    seed_profiles_for_tests()
    pg = Target.objects.create(name="pg", engine="postgresql", host="127.0.0.1", port=5432, database="db", user="u")
    my = Target.objects.create(name="my", engine="mysql", host="127.0.0.1", port=3306, database="db", user="u")
    gone = Target.objects.create(name="gone", engine="postgresql", host="127.0.0.1", port=5432, database="db", user="u",
                                 archived_at=timezone.now())
    staff, operator = make_user("sched-api-staff", staff=True), make_user("sched-api-op", operator=True)
    return {"pg": pg, "my": my, "gone": gone, "staff": staff, "operator": operator}


def as_user(user):
    api = APIClient()
    if user is not None:
        api.force_authenticate(user)
    return api


def test_it_lets_staff_create_change_pause_resume_and_delete_a_schedule(setup):
    staff = as_user(setup["staff"])
    response = staff.post(API, {"name": "nightly", "target": setup["pg"].pk, "profile": "pgbench-ro-quick", "cron": "0 3 * * *",
                                "repeats": 3, "overrides": {"threads": 2}}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert {k: body[k] for k in ("name", "target", "profile", "cron", "repeats", "overrides", "enabled", "created_by",
                                 "last_error", "keeps_failing", "recent_runs")} == {
        "name": "nightly", "target": setup["pg"].pk, "profile": "pgbench-ro-quick", "cron": "0 3 * * *", "repeats": 3,
        "overrides": {"threads": 2}, "enabled": True, "created_by": "sched-api-staff", "last_error": "",
        "keeps_failing": False, "recent_runs": []}
    schedule = Schedule.objects.get(pk=body["id"])
    task = schedule.periodic_task
    assert task.task == "runs.scheduled_run" and task.enabled and task.args == f"[{schedule.pk}]"
    assert (task.crontab.minute, task.crontab.hour, task.crontab.day_of_week) == ("0", "3", "*")

    changed = staff.patch(f"{API}{schedule.pk}/", {"cron": "30 2 * * 1"}, format="json")
    assert changed.status_code == 200 and changed.json()["cron"] == "30 2 * * 1"
    task.refresh_from_db()
    assert (task.crontab.minute, task.crontab.hour, task.crontab.day_of_week) == ("30", "2", "1")

    paused = staff.post(f"{API}{schedule.pk}/pause/")
    assert paused.status_code == 200 and paused.json()["enabled"] is False
    task.refresh_from_db()
    assert task.enabled is False  # beat skips it
    assert staff.post(f"{API}{schedule.pk}/pause/").json()["enabled"] is False  # idempotent
    resumed = staff.post(f"{API}{schedule.pk}/resume/")
    assert resumed.status_code == 200 and resumed.json()["enabled"] is True
    task.refresh_from_db()
    assert task.enabled is True

    listing = as_user(setup["operator"]).get(API).json()
    assert [s["name"] for s in listing["results"]] == ["nightly"] and listing["count"] == 1

    profile = BenchmarkProfile.objects.get(slug="pgbench-ro-quick")
    run = Run.objects.create(target=setup["pg"], profile=profile, params=profile.resolve({}), schedule=schedule,
                             state=RunState.SUCCEEDED, summary={"tps": 10.0})
    assert staff.get(f"{API}{schedule.pk}/").json()["recent_runs"] == [{"id": run.pk, "state": "succeeded"}]
    deleted = staff.delete(f"{API}{schedule.pk}/")
    assert deleted.status_code == 204
    assert not Schedule.objects.exists() and not PeriodicTask.objects.filter(pk=task.pk).exists()
    run.refresh_from_db()
    assert run.schedule_id is None  # the run stays, without origin
    assert staff.get(f"{API}{schedule.pk}/").status_code == 404


def test_it_refuses_bad_schedules_naming_each_field_and_stores_nothing(setup):
    staff = as_user(setup["staff"])
    cases = [
        ({"cron": "61 * * * *"}, {"cron"}),
        ({"cron": "0 3 * *"}, {"cron"}),
        ({"overrides": {"threads": 0}}, {"overrides"}),
        ({"overrides": {"tables": 4}}, {"overrides"}),  # a sysbench field on a pgbench profile
        ({"target": setup["gone"].pk}, {"target"}),
        ({"target": setup["my"].pk}, {"profile"}),  # a PostgreSQL profile on a MySQL target
        ({"profile": "hammerdb-tpcc-sqlserver"}, {"profile"}),
        ({"profile": "no-such-profile"}, {"profile"}),
        ({"repeats": 0}, {"repeats"}),
        ({"repeats": 31}, {"repeats"}),  # at most 30 (issue 46.1)
        ({"name": ""}, {"name"}),
        ({"cron": "61 * * * *", "repeats": 0, "overrides": {"threads": 0}}, {"cron", "repeats", "overrides"}),
    ]
    good = {"name": "n", "target": setup["pg"].pk, "profile": "pgbench-ro-quick", "cron": "0 3 * * *"}
    for change, fields in cases:
        response = staff.post(API, {**good, **change}, format="json")
        body = response.json()
        assert response.status_code == 400 and body["code"] == "invalid" and set(body["errors"]) == fields, (change, body)
        assert body["detail"].startswith("Invalid parameters")
    assert not Schedule.objects.exists() and not PeriodicTask.objects.filter(task="runs.scheduled_run").exists()
    assert staff.post(API, good, format="json").status_code == 201
    duplicate = staff.post(API, good, format="json")
    assert duplicate.status_code == 400 and set(duplicate.json()["errors"]) == {"name"}
    schedule = Schedule.objects.get()
    bad_change = staff.patch(f"{API}{schedule.pk}/", {"cron": "every day"}, format="json")
    assert bad_change.status_code == 400 and set(bad_change.json()["errors"]) == {"cron"}
    schedule.refresh_from_db()
    assert schedule.cron == "0 3 * * *" and schedule.periodic_task.crontab.hour == "3"  # left as it was


def test_only_staff_write_and_operators_read(setup):
    schedule = Schedule(name="s", target=setup["pg"], profile=BenchmarkProfile.objects.get(slug="pgbench-ro-quick"),
                        cron="0 3 * * *")
    from runs.schedules import save_schedule

    save_schedule(schedule)
    anonymous, operator = as_user(None), as_user(setup["operator"])
    response = anonymous.get(API)
    assert response.status_code == 401 and response.json()["code"] == "not_authenticated"
    assert operator.get(API).status_code == 200 and operator.get(f"{API}{schedule.pk}/").status_code == 200
    for method, url, body in (("post", API, {"name": "x"}), ("patch", f"{API}{schedule.pk}/", {"cron": "1 * * * *"}),
                              ("post", f"{API}{schedule.pk}/pause/", None), ("post", f"{API}{schedule.pk}/resume/", None),
                              ("delete", f"{API}{schedule.pk}/", None)):
        response = getattr(operator, method)(url, body, format="json")
        assert response.status_code == 403 and response.json()["code"] == "permission_denied", (method, url)
        assert getattr(anonymous, method)(url, body, format="json").status_code == 401
    schedule.refresh_from_db()
    assert schedule.enabled and schedule.cron == "0 3 * * *"


def test_the_schema_documents_schedules_and_the_version_is_the_changelogs(client):
    schema = client.get("/api/v1/schema/?format=json").json()
    changelog = (ROOT / "docs" / "API-CHANGELOG.md").read_text()
    newest = re.search(r"^## (\d+\.\d+\.\d+)", changelog, re.M).group(1)
    assert schema["info"]["version"] == newest
    paths = schema["paths"]
    assert {"400", "401", "403", "429"} <= set(paths["/api/v1/schedules/"]["post"]["responses"])
    assert {"400", "401", "403"} <= set(paths["/api/v1/schedules/{id}/"]["patch"]["responses"])
    assert "204" in paths["/api/v1/schedules/{id}/"]["delete"]["responses"]
    assert {"/api/v1/schedules/{id}/pause/", "/api/v1/schedules/{id}/resume/"} <= set(paths)
    schedule = schema["components"]["schemas"]["Schedule"]["properties"]
    assert schedule["repeats"]["maximum"] == 30 and schedule["repeats"]["minimum"] == 1
    # Since 2.5.0 (issue 52.5) a request body has its own component, the writable fields only: `repeats` (write-only)
    # is in RunRequest, never in the answer's Run.
    run_request = schema["components"]["schemas"]["RunRequest"]["properties"]
    assert run_request["repeats"]["maximum"] == 30 and run_request["repeats"]["minimum"] == 1
    run = schema["components"]["schemas"]["Run"]["properties"]
    assert "repeats" not in run and "repeat_group" not in run_request
    assert "repeat_group" in run
    assert any(p["name"] == "repeat_group" for p in paths["/api/v1/runs/"]["get"]["parameters"])
    assert "schedules" in client.get("/api/v1/").json()


def test_staff_delete_a_schedule_from_the_page_after_confirming(setup, client):
    from runs.schedules import save_schedule

    profile = BenchmarkProfile.objects.get(slug="pgbench-ro-quick")
    schedule = save_schedule(Schedule(name="weekly", target=setup["pg"], profile=profile, cron="0 4 * * 0"))
    task_id = schedule.periodic_task_id
    run = Run.objects.create(target=setup["pg"], profile=profile, params=profile.resolve({}), schedule=schedule,
                             state=RunState.FAILED)
    client.force_login(setup["operator"])
    assert client.get(f"/runs/schedules/{schedule.pk}/delete/").status_code == 403
    assert client.post(f"/runs/schedules/{schedule.pk}/delete/").status_code == 403
    client.force_login(setup["staff"])
    listing = client.get("/runs/schedules/").content.decode()
    assert f'href="/runs/schedules/{schedule.pk}/delete/"' in listing
    assert f'href="/runs/schedules/{schedule.pk}/delete/"' in client.get(f"/runs/schedules/{schedule.pk}/").content.decode()
    confirm = client.get(f"/runs/schedules/{schedule.pk}/delete/")
    html = confirm.content.decode()
    assert confirm.status_code == 200 and 'id="confirm-delete"' in html and "weekly" in html and "Its 1 run stays" in html
    assert Schedule.objects.filter(pk=schedule.pk).exists()  # asking deletes nothing
    done = client.post(f"/runs/schedules/{schedule.pk}/delete/")
    assert done.status_code == 302 and done["Location"] == "/runs/schedules/"
    assert not Schedule.objects.exists() and not PeriodicTask.objects.filter(pk=task_id).exists()
    assert Run.objects.get(pk=run.pk).schedule_id is None
    assert client.post(f"/runs/schedules/{schedule.pk}/delete/").status_code == 404


def test_the_admin_validates_schedules_and_deleting_removes_the_beat_entry(setup, client):
    from django.contrib.auth.models import User

    admin = User.objects.create_superuser("sched-admin", password="x-Pass-123456")
    client.force_login(admin)
    profile = BenchmarkProfile.objects.get(slug="pgbench-ro-quick")
    form = {"name": "from-admin", "target": setup["pg"].pk, "profile": profile.pk, "cron": "61 * * * *", "repeats": "2",
            "overrides": "{}", "enabled": "on"}
    bad = client.post("/admin/runs/schedule/add/", form)
    assert bad.status_code == 200 and "cron" in bad.context["adminform"].form.errors and not Schedule.objects.exists()
    ok = client.post("/admin/runs/schedule/add/", {**form, "cron": "15 1 * * *"})
    assert ok.status_code == 302, ok.content.decode()[:2000]
    schedule = Schedule.objects.get()
    assert schedule.created_by == admin and schedule.repeats == 2
    assert schedule.periodic_task.crontab.minute == "15" and schedule.periodic_task.enabled
    other = Schedule.objects.create(name="other", target=setup["pg"], profile=profile, cron="0 1 * * *")
    from runs.schedules import save_schedule

    save_schedule(other)
    tasks = [schedule.periodic_task_id, other.periodic_task_id]
    response = client.post("/admin/runs/schedule/", {"action": "delete_selected", "_selected_action": [schedule.pk, other.pk],
                                                     "post": "yes"})
    assert response.status_code == 302
    assert not Schedule.objects.exists() and not PeriodicTask.objects.filter(pk__in=tasks).exists()


def test_the_schedules_list_reads_a_fixed_number_of_queries(setup, client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from runs.schedules import save_schedule

    profile = BenchmarkProfile.objects.get(slug="pgbench-ro-quick")
    api = as_user(setup["staff"])
    client.force_login(setup["staff"])
    counts, made = [], 0
    for n in (1, 4):
        for i in range(made, n):
            schedule = save_schedule(Schedule(name=f"s{i}", target=setup["pg"], profile=profile, cron="0 3 * * *"))
            Run.objects.create(target=setup["pg"], profile=profile, params=profile.resolve({}), schedule=schedule,
                               state=RunState.FAILED)
        made = n
        with CaptureQueriesContext(connection) as listing:
            assert api.get(API).json()["count"] == n
        with CaptureQueriesContext(connection) as page:
            assert client.get("/runs/schedules/").content.decode().count("<tr data-schedule=") == n
        counts.append((len(listing), len(page)))
    assert counts[0] == counts[1], counts


# By hand (runs/footprint.py's rule; benchmarks/load_rate.out.txt): sysbench on MariaDB, one table of 4,032,259 rows
# x 248 bytes = 1,000,000,232 bytes, past the 10^9 bound; one row fewer (999,999,984 bytes) is not.
LARGE_ESTIMATE = "This run loads 4,032,259 rows, about 1.0 GB on the target (248 bytes a row)"


def test_a_large_schedule_is_confirmed_once_when_saved_and_each_due_time_launches_what_was_confirmed(setup, client):
    """Issue 33.8 for schedules: before, every due time launched with confirm=True though nobody had been shown the
    estimate. Now saving a large set-up asks for `large_run_confirmed` (form, API, admin), and a due time launches
    only what was confirmed; a stored schedule that is large and unconfirmed (saved before this rule) starts no run
    and says why in its last_error."""
    from runs.schedules import start_scheduled_run

    staff = as_user(setup["staff"])
    large = {"name": "big", "target": setup["my"].pk, "profile": "sysbench-oltp-rw-mysql-quick", "cron": "0 3 * * *",
             "overrides": {"rows_per_table": 4_032_259}}
    refused = staff.post(API, large, format="json")
    assert refused.status_code == 400 and list(refused.json()["errors"]) == ["large_run_confirmed"]
    assert refused.json()["errors"]["large_run_confirmed"][0].startswith(LARGE_ESTIMATE)
    assert not Schedule.objects.exists()
    small = staff.post(API, {**large, "name": "small", "overrides": {"rows_per_table": 4_032_258}}, format="json")
    assert small.status_code == 201 and small.json()["large_run_confirmed"] is False
    created = staff.post(API, {**large, "large_run_confirmed": True}, format="json")
    assert created.status_code == 201 and created.json()["large_run_confirmed"] is True
    schedule = Schedule.objects.get(name="big")
    assert staff.post(f"{API}{schedule.pk}/pause/").status_code == 200  # a pause or resume keeps the confirmation
    assert staff.post(f"{API}{schedule.pk}/resume/").json()["large_run_confirmed"] is True
    run_id = start_scheduled_run(schedule.pk)
    assert Run.objects.get(pk=run_id).params["rows_per_table"] == 4_032_259

    # Stored large and unconfirmed, as before this rule: the due time starts nothing and says why.
    Schedule.objects.filter(name="small").update(overrides={"rows_per_table": 4_032_259})
    unconfirmed = Schedule.objects.get(name="small")
    assert start_scheduled_run(unconfirmed.pk) is None and not unconfirmed.runs.exists()
    unconfirmed.refresh_from_db()
    assert unconfirmed.last_error.startswith("confirm: " + LARGE_ESTIMATE)

    # The page: the estimate beside the box, saved once it is ticked.
    client.force_login(setup["staff"])
    form = {"name": "from-page", "target": setup["my"].pk, "profile": BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick").pk,
            "cron": "0 4 * * *", "repeats": "1", "overrides": '{"rows_per_table": 4032259}', "enabled": "on"}
    page = client.post("/runs/schedules/new/", form)
    assert page.status_code == 200 and page.context["form"].errors["large_run_confirmed"][0].startswith(LARGE_ESTIMATE)
    assert not Schedule.objects.filter(name="from-page").exists()
    assert client.post("/runs/schedules/new/", {**form, "large_run_confirmed": "on"}).status_code == 302
    assert Schedule.objects.get(name="from-page").large_run_confirmed is True
