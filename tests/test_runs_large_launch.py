"""The full whitepaper profile does not start without a word (issue 33.8): a launch that loads at least 1 GB or
takes at least 1 h shows the rows, the disk they take and the time, and is refused, naming `confirm`, until it is
confirmed, on the form and through the API. Before, "Reproduce" launched 64 tables x 10,000,000 rows at once.

Expected numbers by hand from the rule in runs/footprint.py, whose rates and sizes benchmarks/load_rate.out.txt
measured on this machine: sysbench on MariaDB 248 bytes a row, loaded at 47,800 rows/s; pgbench 157 bytes a row
(scale x 100,000 rows) at 216,000 rows/s; confirm from 10^9 bytes or 3,600 s."""

import os
from pathlib import Path

import pytest
from django.test import Client
from django.utils import translation

from runs.models import BenchmarkProfile, Run

from testbed.runs_support import make_user
from .test_runs_trust import huawei_mysql80_row, make_target

pytestmark = pytest.mark.django_db
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"

# The reproduced Huawei MySQL row: 64 x 10,000,000 = 640,000,000 rows; x 248 = 158,720,000,000 bytes = 158.7 GB;
# prepare 640,000,000 / 47,800 = 13,389.1 s = 3 h 43 min; one step of 3,600 s (no warm-up) = 1 h 0 min;
# in all 16,989.1 s, rounded 16,989 s = 4 h 43 min.
FULL_MYSQL = ("This run loads 640,000,000 rows, about 158.7 GB on the target (248 bytes a row), and takes about "
              "4 h 43 min: the prepare about 3 h 43 min at 47,800 rows/s, plus 1 step(s) of warm-up and duration, 1 h 0 min.")


def reproduce_form(profiles, target, row):
    return {"target": target.pk, "profile": profiles["sysbench-oltp-rw-mysql"].pk, "reproduces": row.pk, "tables": "64",
            "rows_per_table": "10000000", "threads": "200", "duration_s": "3600", "thread_sweep": "", "report_interval_s": "3",
            "warmup_s": "0", "prepared": "true"}


def test_the_form_shows_rows_disk_and_time_and_launches_only_once_confirmed(client, staff_user, profiles):
    maria, row = make_target("maria", "mysql"), huawei_mysql80_row()
    client.force_login(staff_user)
    response = client.post("/runs/new/", reproduce_form(profiles, maria, row))
    assert response.status_code == 200 and not Run.objects.exists()
    assert response.context["form"].errors["confirm"] == [
        FULL_MYSQL + ' Confirm to launch it (the form\'s "confirm" box; the API\'s "confirm": true).']
    page = response.content.decode()
    assert 'id="large-run-estimate"' in page and "640,000,000 rows, about 158.7 GB" in page and 'name="confirm"' in page
    response = client.post("/runs/new/", {**reproduce_form(profiles, maria, row), "confirm": "on"})
    assert response.status_code == 302
    run = Run.objects.get()
    assert (run.params["tables"], run.params["rows_per_table"], run.reproduces) == (64, 10_000_000, row)


def test_the_form_says_it_in_chinese(client, staff_user, profiles):
    maria, row = make_target("maria", "mysql"), huawei_mysql80_row()
    client.force_login(staff_user)
    with translation.override("zh-hans"):
        response = client.post("/runs/new/", reproduce_form(profiles, maria, row), HTTP_ACCEPT_LANGUAGE="zh-hans")
    message = response.context["form"].errors["confirm"][0]
    assert "640,000,000" in message and "158.7 GB" in message and "4 h 43 min" not in message
    assert "This run loads" not in message and not Run.objects.exists()


def test_the_api_refuses_under_confirm_then_launches(operator_api, profiles):
    target = make_target("pg", "postgresql")
    # pgbench-ro as published: scale 1,000 = 100,000,000 rows x 157 = 15,700,000,000 bytes = 15.7 GB; prepare
    # 100,000,000 / 216,000 = 462.96 s, rounded 463 s = 7 min 43 s; one step of 120 s; in all 582.96 s, rounded 583 s = 9 min 43 s.
    launch = {"target": target.pk, "profile": "pgbench-ro"}
    response = operator_api.post("/api/v1/runs/", launch, format="json")
    assert response.status_code == 400 and list(response.json()["errors"]) == ["confirm"]
    assert response.json()["errors"]["confirm"][0].startswith(
        "This run loads 100,000,000 rows, about 15.7 GB on the target (157 bytes a row), and takes about 9 min 43 s: "
        "the prepare about 7 min 43 s at 216,000 rows/s, plus 1 step(s) of warm-up and duration, 2 min 0 s.")
    assert not Run.objects.exists()
    response = operator_api.post("/api/v1/runs/", {**launch, "confirm": True}, format="json")
    assert response.status_code == 201 and response.json()["params"]["scale"] == 1000


@pytest.mark.parametrize("overrides, repeats, asks", [
    # 10^9 / 248 = 4,032,258.06: 4,032,258 rows are 999,999,984 bytes; one more row is 1,000,000,232.
    ({"rows_per_table": 4_032_258}, 1, False),
    ({"rows_per_table": 4_032_259}, 1, True),
    # 1,000 rows load in 0.02 s: 3,599 s of duration is 3,599 s in all, 3,600 s is the bound.
    ({"duration_s": 3599}, 1, False),
    ({"duration_s": 3600}, 1, True),
    # Each repeat loads and measures again: 2 x 1,800.02 s = 3,600.04 s.
    ({"duration_s": 1800}, 2, True),
    ({}, 1, False),  # the quick profile as it is
])
def test_the_bounds(operator_api, profiles, overrides, repeats, asks):
    target = make_target("maria", "mysql")
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick",
                                                   "overrides": overrides, "repeats": repeats}, format="json")
    assert (response.status_code, list(response.json().get("errors", {}))) == ((400, ["confirm"]) if asks else (201, []))


WIDEST = """() => Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > window.innerWidth)
  .slice(0, 5).map(e => e.tagName + '#' + e.id + ' ' + Math.round(e.getBoundingClientRect().right))"""


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_in_chromium_the_estimate_shows_beside_the_box_to_tick(committed, live_server, browser, width, lang):
    """The whitepaper profile as seeded (a sweep of 8-128 threads): 640,000,000 rows, 158.7 GB; the prepare
    13,389.1 s plus 5 steps of 3,600 s = 18,000 s (5 h 0 min); in all 31,389.1 s, rounded 31,389 s = 8 h 43 min.
    PERFDASH_SCREENSHOTS=1 writes docs/screenshots/large-run-confirm-*.png. Nothing is launched."""
    target = make_target("maria", "mysql")
    profile = BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql")
    staff = make_user("large-staff", staff=True)
    django_client = Client()
    django_client.force_login(staff)
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": django_client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    page.goto(f"{live_server.url}/runs/new/?lang={lang}&target={target.pk}&profile={profile.pk}")
    assert page.input_value("#id_tables") == "64" and page.input_value("#id_thread_sweep") == "8, 16, 32, 64, 128"
    page.click("#launch")
    page.wait_for_selector("#large-run-estimate")
    text = page.inner_text("#large-run-estimate")
    assert "640,000,000" in text and "158.7 GB" in text
    assert ("8 h 43 min" in text and "5 h 0 min" in text) if lang == "en" else ("8 小时 43 分" in text and "5 小时 0 分" in text)
    assert page.locator("#id_confirm").is_visible() and not page.locator("#id_confirm").is_checked()
    assert page.evaluate(WIDEST) == []
    if os.environ.get("PERFDASH_SCREENSHOTS"):
        page.locator("#confirm-large").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"large-run-confirm-{width}{'' if lang == 'en' else '.zh-hans'}.png"))
    context.close()
    assert not Run.objects.exists()
