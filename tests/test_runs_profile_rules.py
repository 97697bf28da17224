"""A benchmark profile is held to a launch's own rules and limits (runs/params.py), in the model (issue 50.6): the
admin refuses a thread sweep that is not a list of whole numbers and absurd numbers, naming the field; a profile
stored around that (a migration, raw SQL) makes every launch of it a 400 naming the profile and the field, on the
API, the run form and a schedule, never a 500."""

import pytest

from runs.models import BenchmarkProfile, Run, Schedule, Target
from runs.schedules import start_scheduled_run

pytestmark = pytest.mark.django_db

# The admin's add form of a sound pgbench profile (scale 1 holds 100000 rows: range 100000 is the most it takes).
SOUND = {"slug": "pg-ok", "name": "pg ok", "tool": "pgbench", "engine": "postgresql", "workload": "ro", "tables": "",
         "rows_per_table": "", "scale": "1", "range": "100000", "threads": "8", "jobs": "", "thread_sweep": "[]",
         "duration_s": "60", "report_interval_s": "1", "warmup_s": "0", "prepared": "on", "methodology": "",
         "description": ""}

BAD_SWEEPS = ['[8, "16; id"]', '"8,16"', '{"a": 1}', "[1e400]", "[8.5]", "[0]", "[2000]", "[true]", "[8, 8]",
              "[" + ", ".join(str(n) for n in range(1, 12)) + "]"]
# Each outside its limit in runs/params.py: threads 1-1024, duration_s 1-86400, report_interval_s 1-60, warmup_s 0-3600.
ABSURD = [("threads", "0"), ("threads", "100000"), ("duration_s", "2147483647"), ("report_interval_s", "0"),
          ("report_interval_s", "61"), ("warmup_s", "999999"), ("scale", "100001"), ("jobs", "9"),
          ("range", "100001"), ("report_interval_s", "30")]


def admin_errors(staff, **fields):
    response = staff.post("/admin/runs/benchmarkprofile/add/", {**SOUND, "duration_s": fields.pop("_duration", "60"), **fields})
    assert response.status_code == 200, "saved"
    return response.context["adminform"].form.errors


@pytest.mark.parametrize("sweep", BAD_SWEEPS)
def test_the_admin_refuses_a_thread_sweep_that_is_not_a_list_of_whole_numbers(staff, sweep):
    errors = admin_errors(staff, thread_sweep=sweep)
    assert list(errors) == ["thread_sweep"], errors
    assert "thread_sweep" in errors["thread_sweep"][0]
    assert not BenchmarkProfile.objects.exists()


@pytest.mark.parametrize("field,value", ABSURD)
def test_the_admin_refuses_numbers_a_launch_would_refuse(staff, field, value):
    # report_interval_s 30 is within 1-60 but above the 20 s duration given with it.
    errors = admin_errors(staff, **{field: value, "_duration": "20" if value == "30" else "60"})
    assert list(errors) == [field], errors
    assert field in errors[field][0]
    assert not BenchmarkProfile.objects.exists()


def test_the_admin_saves_a_sound_profile_with_its_sweep_typed(staff):
    response = staff.post("/admin/runs/benchmarkprofile/add/", {**SOUND, "thread_sweep": '[8, "16", 32]', "jobs": "8"})
    assert response.status_code == 302
    assert BenchmarkProfile.objects.get().thread_sweep == [8, 16, 32]


def test_the_admin_refuses_what_sysbench_requires_and_lets_pgbench_fields_be(staff):
    errors = admin_errors(staff, tool="sysbench", engine="mysql", workload="oltp_read_write", scale="", range="")
    assert sorted(errors) == ["rows_per_table", "tables"]


STORED_BAD = [({"thread_sweep": [8, "16; id"]}, "thread_sweep"), ({"thread_sweep": "8,16"}, "thread_sweep"),
              ({"thread_sweep": {"a": 1}}, "thread_sweep"), ({"threads": 0}, "threads"), ({"threads": 100000}, "threads"),
              ({"duration_s": 2147483647}, "duration_s"), ({"report_interval_s": 0}, "report_interval_s"),
              ({"warmup_s": 999999}, "warmup_s")]


@pytest.fixture
def setup(profiles, operator_user):
    target = Target.objects.create(name="pg", engine="postgresql", host="127.0.0.1", port=5432, database="db", user="u")
    return {"target": target, "profile": profiles["pgbench-ro-quick"]}


def spoil(profile, values):
    BenchmarkProfile.objects.filter(pk=profile.pk).update(**values)  # around the model's validation, as raw SQL would


@pytest.mark.parametrize("values,field", STORED_BAD)
def test_a_launch_of_a_profile_stored_bad_is_a_400_naming_the_profile_and_the_field(setup, operator_api, operator, values, field):
    spoil(setup["profile"], values)
    response = operator_api.post("/api/v1/runs/", {"target": setup["target"].pk, "profile": "pgbench-ro-quick"}, format="json")
    assert response.status_code == 400
    message = response.json()["errors"]["profile"][0]
    assert "pgbench-ro-quick" in message and f"its {field} is refused" in message, message
    response = operator.post("/runs/new/", {"target": setup["target"].pk, "profile": setup["profile"].pk})
    assert response.status_code == 200
    assert f"its {field} is refused" in response.context["form"].errors["profile"][0]
    assert not Run.objects.exists()


@pytest.mark.parametrize("values,field", STORED_BAD[:4])
def test_a_schedule_of_a_profile_stored_bad_is_refused_and_its_due_time_says_why(setup, staff, staff_user, values, field):
    schedule = Schedule.objects.create(name="n", target=setup["target"], profile=setup["profile"], cron="0 3 * * *",
                                       created_by=staff_user)
    spoil(setup["profile"], values)
    assert start_scheduled_run(schedule.pk) is None
    schedule.refresh_from_db()
    assert schedule.last_error.startswith("profile: Profile pgbench-ro-quick cannot run: its " + field), schedule.last_error
    response = staff.post("/runs/schedules/new/", {"name": "nightly", "target": setup["target"].pk, "profile": setup["profile"].pk,
                                                  "cron": "0 3 * * *", "repeats": "1", "enabled": "on", "overrides": "{}"})
    assert response.status_code == 200
    assert f"its {field} is refused" in response.context["form"].errors["profile"][0]
    assert not Run.objects.exists()


def test_the_form_shows_a_profile_stored_bad_without_a_500(setup, operator):
    spoil(setup["profile"], {"thread_sweep": {"a": 1}})
    response = operator.get(f"/runs/new/?profile={setup['profile'].pk}&target={setup['target'].pk}")
    assert response.status_code == 200
