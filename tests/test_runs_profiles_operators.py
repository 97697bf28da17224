"""Operators make benchmark profiles where they launch runs (issue 50.9): the page /runs/profiles/ (list, create, edit,
copy, delete) and the API /api/v1/profiles/ (POST, PUT, PATCH, DELETE), with the model's rules (BenchmarkProfile.clean,
a launch's limits) naming each bad field. A profile that follows a published methodology only staff change or delete;
a profile that runs or schedules name is never deleted. Customers and visitors get none of it."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runs.models import BenchmarkProfile, Run, Schedule, Target

pytestmark = pytest.mark.django_db

MINE = {"slug": "sb-mine", "name": "sysbench mine", "tool": "sysbench", "engine": "mysql", "workload": "oltp_read_only",
        "tables": 2, "rows_per_table": 5000, "threads": 4, "thread_sweep": [4, 8], "duration_s": 30,
        "report_interval_s": 5, "warmup_s": 10}


def api_as(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def customer_api(customer):
    return api_as(customer.user)


@pytest.fixture
def staff_api(staff_user):
    return api_as(staff_user)


# --- API ----------------------------------------------------------------------------------------------


def test_an_operator_creates_a_profile_through_the_api(operator_api):
    response = operator_api.post("/api/v1/profiles/", MINE, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert {k: body[k] for k in MINE} == MINE
    assert body["methodology"] is None and body["runnable"] is True
    stored = BenchmarkProfile.objects.get(slug="sb-mine")
    assert (stored.threads, stored.thread_sweep, stored.prepared, stored.jobs) == (4, [4, 8], True, None)


def test_visitors_and_customers_may_not_write_profiles(anonymous, customer_api):
    assert APIClient().post("/api/v1/profiles/", MINE, format="json").status_code == 401
    assert customer_api.post("/api/v1/profiles/", MINE, format="json").status_code == 403
    assert not BenchmarkProfile.objects.exists()


BAD = [("threads", 0, "threads must be between 1 and 1024, got 0."),
       ("threads", "２", "threads must be a whole number, got '２'."),
       ("threads", 100000, "threads must be between 1 and 1024, got 100000."),
       ("duration_s", 2147483647, "duration_s must be between 1 and 86400, got 2147483647."),
       ("warmup_s", 999999, "warmup_s must be between 0 and 3600, got 999999."),
       ("thread_sweep", "8,16", "thread_sweep must be a list of thread counts, e.g. [8, 16, 32]."),
       ("thread_sweep", [8, "16; id"], "thread_sweep: threads must be a whole number, got '16; id'."),
       ("thread_sweep", {"a": 1}, "thread_sweep must be a list of thread counts, e.g. [8, 16, 32]."),
       ("report_interval_s", 31, "report_interval_s (31) must not exceed duration_s (30)."),
       ("tables", None, "tables is required for sysbench."),
       ("workload", "/tmp/x.lua", "is not a workload sysbench runs here"),
       ("scale", "２", "scale must be a whole number, got '２'."),  # a pgbench field, on a sysbench profile too
       ("jobs", True, "jobs must be a whole number.")]


@pytest.mark.parametrize("field,value,message", BAD)
def test_the_api_refuses_a_bad_profile_naming_the_field(operator_api, field, value, message):
    response = operator_api.post("/api/v1/profiles/", {**MINE, field: value}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert set(body) >= {"detail", "code", "errors"} and list(body["errors"]) == [field], body
    assert message in body["errors"][field][0]
    assert not BenchmarkProfile.objects.exists()


def test_the_api_names_every_bad_field_at_once(operator_api):
    response = operator_api.post("/api/v1/profiles/", {**MINE, "threads": 0, "warmup_s": -1, "thread_sweep": [1e300]},
                                 format="json")
    assert response.status_code == 400
    assert sorted(response.json()["errors"]) == ["thread_sweep", "threads", "warmup_s"]


def test_an_operator_changes_their_profile_with_put_and_patch(operator_api):
    operator_api.post("/api/v1/profiles/", MINE, format="json")
    response = operator_api.put("/api/v1/profiles/sb-mine/", {**MINE, "threads": 16, "thread_sweep": []}, format="json")
    assert response.status_code == 200, response.json()
    response = operator_api.patch("/api/v1/profiles/sb-mine/", {"duration_s": 4}, format="json")
    assert response.status_code == 400  # its report interval (5 s) is longer than 4 s
    assert list(response.json()["errors"]) == ["report_interval_s"]
    response = operator_api.patch("/api/v1/profiles/sb-mine/", {"duration_s": 5}, format="json")
    assert response.status_code == 200
    stored = BenchmarkProfile.objects.get(slug="sb-mine")
    assert (stored.threads, stored.thread_sweep, stored.duration_s) == (16, [], 5)


def test_a_methodology_profile_only_staff_change_or_delete(profiles, operator_api, staff_api):
    assert profiles["pgbench-ro"].methodology_id is not None  # seeded from the Alibaba whitepaper
    for call in (lambda c: c.patch("/api/v1/profiles/pgbench-ro/", {"threads": 8}, format="json"),
                 lambda c: c.put("/api/v1/profiles/pgbench-ro/", {}, format="json"),
                 lambda c: c.delete("/api/v1/profiles/pgbench-ro/")):
        response = call(operator_api)
        assert response.status_code == 403
        assert "published methodology" in response.json()["detail"]
    assert BenchmarkProfile.objects.get(slug="pgbench-ro").threads == 64
    assert operator_api.get("/api/v1/profiles/pgbench-ro/").json()["methodology"] == "alibaba-2019-06-18-rds-pg-pgbench"
    response = staff_api.patch("/api/v1/profiles/pgbench-ro/", {"threads": 8}, format="json")
    assert response.status_code == 200
    assert BenchmarkProfile.objects.get(slug="pgbench-ro").threads == 8
    # A profile of no methodology the operator changes.
    assert operator_api.patch("/api/v1/profiles/pgbench-tpcb/", {"threads": 8}, format="json").status_code == 200


def test_a_profile_used_by_runs_or_schedules_is_not_deleted(operator_api, staff_user):
    operator_api.post("/api/v1/profiles/", MINE, format="json")
    operator_api.post("/api/v1/profiles/", {**MINE, "slug": "sb-other"}, format="json")
    operator_api.post("/api/v1/profiles/", {**MINE, "slug": "sb-unused"}, format="json")
    target = Target.objects.create(name="my", engine="mysql", host="127.0.0.1", port=3306, database="db", user="u")
    Run.objects.create(target=target, profile=BenchmarkProfile.objects.get(slug="sb-mine"), params={})
    Schedule.objects.create(name="n", target=target, profile=BenchmarkProfile.objects.get(slug="sb-other"),
                            cron="0 3 * * *", created_by=staff_user)
    response = operator_api.delete("/api/v1/profiles/sb-mine/")
    assert response.status_code == 409
    assert response.json()["detail"] == ("Profile sb-mine is used by 1 run(s) and 0 schedule(s): it stays, as their "
                                         "record needs it.")
    assert operator_api.delete("/api/v1/profiles/sb-other/").status_code == 409
    assert operator_api.delete("/api/v1/profiles/sb-unused/").status_code == 204
    assert sorted(BenchmarkProfile.objects.values_list("slug", flat=True)) == ["sb-mine", "sb-other"]


# --- the page -----------------------------------------------------------------------------------------

PAGE = {"slug": "pg-mine", "name": "pgbench mine", "tool": "pgbench", "engine": "postgresql", "workload": "tpcb",
        "tables": "", "rows_per_table": "", "scale": "10", "range": "", "threads": "8", "jobs": "4",
        "thread_sweep": "8, 16", "duration_s": "60", "report_interval_s": "2", "warmup_s": "5", "prepared": "on",
        "description": ""}


def test_visitors_and_customers_get_no_profile_page(anonymous, customer):
    response = anonymous.get("/runs/profiles/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert customer.get("/runs/profiles/").status_code == 403
    assert customer.post("/runs/profiles/new/", PAGE).status_code == 403
    assert not BenchmarkProfile.objects.exists()


def test_an_operator_creates_and_edits_a_profile_on_the_page(operator):
    html = operator.get("/runs/new/").content.decode()
    assert 'href="/runs/profiles/"' in html  # the run form and the sub-navigation link to the profiles
    assert operator.get("/runs/profiles/new/").status_code == 200
    response = operator.post("/runs/profiles/new/", PAGE)
    assert response.status_code == 302 and response["Location"] == "/runs/profiles/"
    profile = BenchmarkProfile.objects.get(slug="pg-mine")
    assert (profile.scale, profile.range, profile.jobs, profile.thread_sweep, profile.warmup_s) == (10, None, 4, [8, 16], 5)
    page = operator.get(f"/runs/profiles/{profile.pk}/").content.decode()
    assert 'value="8, 16"' in page and 'id="save-profile"' in page
    response = operator.post(f"/runs/profiles/{profile.pk}/", {**PAGE, "threads": "16", "thread_sweep": ""})
    assert response.status_code == 302
    profile.refresh_from_db()
    assert (profile.threads, profile.thread_sweep) == (16, [])
    assert "pgbench mine" in operator.get("/runs/profiles/").content.decode()


@pytest.mark.parametrize("field,value,message", [
    ("threads", "0", "threads must be between 1 and 1024, got 0."),
    ("threads", "٣", "threads must be a whole number"),
    ("thread_sweep", "8, 16; id", "thread_sweep: threads must be a whole number"),
    ("thread_sweep", "8, 8", "thread_sweep lists a thread count twice."),
    ("duration_s", "2147483647", "duration_s must be between 1 and 86400, got 2147483647."),
    ("report_interval_s", "0", "report_interval_s must be between 1 and 60, got 0."),
    ("warmup_s", "999999", "warmup_s must be between 0 and 3600, got 999999."),
    ("jobs", "9", "jobs (-j) must not exceed the number of clients (-c)."),
    ("range", "1000001", "range (1000001) must not exceed the rows of the scale (1000000 = scale x 100000)."),
    ("scale", "", "scale is required for pgbench."),
])
def test_the_page_refuses_a_bad_profile_naming_the_field(operator, field, value, message):
    response = operator.post("/runs/profiles/new/", {**PAGE, field: value})
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == [field], errors
    assert message in errors[field][0]
    assert not BenchmarkProfile.objects.exists()


def test_an_operator_reads_and_copies_a_methodology_profile_but_only_staff_change_it(profiles, operator, staff):
    profile = profiles["sysbench-oltp-rw-mysql"]
    page = operator.get(f"/runs/profiles/{profile.pk}/").content.decode()
    assert 'id="save-profile"' not in page and "Only staff change it." in page and 'disabled' in page
    assert 'delete-profile' not in page
    response = operator.post(f"/runs/profiles/{profile.pk}/", {**PAGE, "slug": profile.slug})
    assert response.status_code == 403
    assert operator.get(f"/runs/profiles/{profile.pk}/delete/").status_code == 403
    copy = operator.get(f"/runs/profiles/new/?copy={profile.pk}").context["form"]
    assert copy.initial["slug"] == "sysbench-oltp-rw-mysql-copy" and copy.initial["thread_sweep"] == "8, 16, 32, 64, 128"
    assert copy.initial["threads"] == 200 and "methodology" not in copy.initial
    page = staff.get(f"/runs/profiles/{profile.pk}/").content.decode()
    assert 'id="save-profile"' in page


def test_a_profile_in_use_is_not_deleted_on_the_page_and_an_unused_one_is(operator, operator_user):
    operator.post("/runs/profiles/new/", PAGE)
    operator.post("/runs/profiles/new/", {**PAGE, "slug": "pg-used"})
    used, unused = BenchmarkProfile.objects.get(slug="pg-used"), BenchmarkProfile.objects.get(slug="pg-mine")
    target = Target.objects.create(name="pg", engine="postgresql", host="127.0.0.1", port=5432, database="db", user="u")
    Run.objects.create(target=target, profile=used, params={}, requested_by=operator_user)
    assert "is used by 1 run(s)" in operator.get(f"/runs/profiles/{used.pk}/").content.decode()
    response = operator.post(f"/runs/profiles/{used.pk}/delete/")
    assert response.status_code == 409 and "is used by 1 run(s) and 0 schedule(s)" in response.content.decode()
    assert operator.get(f"/runs/profiles/{unused.pk}/delete/").status_code == 200
    response = operator.post(f"/runs/profiles/{unused.pk}/delete/")
    assert response.status_code == 302
    assert list(BenchmarkProfile.objects.values_list("slug", flat=True)) == ["pg-used"]


def test_the_admin_still_holds_profiles_to_staff(operator):
    response = operator.get("/admin/runs/benchmarkprofile/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
