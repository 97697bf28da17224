"""The campaign pages (issue 47.1-3) over HTTP: operators only; the launch form names each error by its field and
stores nothing; a campaign's page shows each cell's series (n, mean, interval, cv: hand calculations from the TPS
its runs measured, tests/test_campaign_edition.py measured_campaign), the rounds' runs, the chart's points, and asks
for its live part again only while the campaign runs; pause, resume and cancel; a constant number of queries."""

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from runs.campaigns import launch_campaign
from runs.models import Campaign, Run, RunState
from testbed.runs_support import make_targets, make_user

from .test_campaign_edition import TPS, interval, measured_campaign, targets_2_4_8
from .test_campaigns import SYSBENCH, sized_mysql

pytestmark = pytest.mark.django_db


def logged_in(client, name, **kind):
    client.force_login(make_user(name, **kind))
    return client


def test_only_operators_see_campaigns(anonymous, customer):
    for path in ("/runs/campaigns/", "/runs/campaigns/new/"):
        assert anonymous.get(path).status_code in (302, 403)
        assert customer.get(path).status_code == 403


def test_the_form_names_each_error_and_stores_nothing_then_launches(client, profiles):
    logged_in(client, "campaign-form-op", operator=True)
    targets = make_targets()
    mysql, pg = targets["mysql"], targets["postgresql"]
    before = (Campaign.objects.count(), Run.objects.count())
    page = client.post("/runs/campaigns/new/", {"name": "", "profile": profiles[SYSBENCH].pk, "repeats": "1"})
    assert page.status_code == 400
    fields = set(re.findall(r'<li data-field="([\w.]+)"', page.content.decode()))
    assert fields == {"name", "targets"}
    # The launch's own rules (runs/campaigns.py): too few repeats; then an override out of range and a target of
    # another engine, each named.
    page = client.post("/runs/campaigns/new/", {"name": "m", "profile": profiles[SYSBENCH].pk, "targets": [mysql.pk],
                                                "repeats": "1"})
    assert page.status_code == 400 and set(re.findall(r'<li data-field="([\w.]+)"', page.content.decode())) == {"repeats"}
    page = client.post("/runs/campaigns/new/", {"name": "m", "profile": profiles[SYSBENCH].pk, "targets": [mysql.pk, pg.pk],
                                                "repeats": "2", "threads": "0"})
    assert page.status_code == 400
    assert set(re.findall(r'<li data-field="([\w.]+)"', page.content.decode())) == {"threads", "targets.1.profile"}
    assert (Campaign.objects.count(), Run.objects.count()) == before
    # "Estimate its footprint": the whole campaign's, nothing stored. The quick profile loads 1 table x 1,000 rows
    # a run; 1 target x 2 runs, each loading again.
    page = client.post("/runs/campaigns/new/", {"name": "matrix", "profile": profiles[SYSBENCH].pk, "action": "estimate",
                                                "targets": [mysql.pk], "repeats": "2"})
    footprint = page.content.decode().split('id="campaign-footprint">', 1)[1].split("</p>", 1)[0]
    assert page.status_code == 200 and "loads 1,000 rows" in footprint and "Each of the 2 repeats" in footprint
    assert (Campaign.objects.count(), Run.objects.count()) == before
    page = client.post("/runs/campaigns/new/", {"name": "matrix", "profile": profiles[SYSBENCH].pk,
                                                "targets": [mysql.pk, sized_mysql("mysql-4-8", 4, 8).pk], "repeats": "2",
                                                "threads": "3"})
    campaign = Campaign.objects.get()
    assert page.status_code == 302 and page["Location"] == f"/runs/campaigns/{campaign.pk}/"
    assert campaign.overrides == {"threads": 3} and campaign.cells.count() == 2
    assert Run.objects.filter(repeat_group__campaign_cell__campaign=campaign).count() == 4


def test_a_campaigns_page_shows_each_cells_series_rounds_and_chart(client, profiles):
    campaign = measured_campaign(profiles, targets_2_4_8(), TPS)
    logged_in(client, "campaign-page-op", operator=True)
    html = client.get(f"/runs/campaigns/{campaign.pk}/").content.decode()
    series = html.split('id="campaign-series"', 1)[1].split("</table>", 1)[0]
    for values, row in zip(TPS, re.findall(r'<tr id="cell-\d+".*?</tr>', series, re.S)):
        mean, low, high, cv = interval(values)
        assert f'<td class="mean">{mean:.2f}</td>' in row and "3 / 3" in row
        assert f"{low:.2f}–{high:.2f}" in row and f"{cv:.4f}" in row
    matrix = html.split('id="campaign-matrix"', 1)[1].split("</table>", 1)[0]
    assert [float(v) for v in re.findall(r">([\d.]+)</a>", matrix)] == [v for values in TPS for v in values]
    chart = json.loads(re.search(r'<script id="campaign-chart-data" type="application/json">(.*?)</script>', html, re.S)[1])
    [line] = chart["series"]  # one family (general) and memory ratio (1:2)
    assert line["label"] == "general · 1:2"
    assert [(p["x"], p["tps"]) for p in line["points"]] == [(2, 110.0), (4, 204.0), (8, 400.33)]
    # A point goes to its cell on this page (no flavour page: a declared size is no catalogue flavour), and says so.
    assert all(p["url"].startswith("#cell-") and f'id="{p["url"][1:]}"' in html for p in line["points"])
    assert "A point goes to its cell&#x27;s series below." in html and "opens its flavour" not in html
    # Finished: the live part is not asked for again.
    assert 'data-state="finished"' in html and "hx-trigger" not in html.split('id="campaign-live"', 1)[1][:300]


def test_a_running_campaigns_live_part_asks_again_and_is_the_pages_own(client, profiles):
    user = make_user("campaign-live-op", operator=True)
    campaign = launch_campaign(name="live", profile=profiles[SYSBENCH], overrides={}, targets=[make_targets()["mysql"]],
                               user=user, repeats=2)
    client.force_login(user)
    page = client.get(f"/runs/campaigns/{campaign.pk}/").content.decode()
    part = client.get(f"/runs/campaigns/{campaign.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert part.startswith('\n<section id="campaign-live"') or part.lstrip().startswith('<section id="campaign-live"')
    assert "<html" not in part
    unmasked = lambda html: re.sub(r'name="csrfmiddlewaretoken" value="\w+"', "", html)  # noqa: E731 - masked anew each time
    assert unmasked(part.strip()) in unmasked(page)  # one partial: the page's part is the update
    assert 'hx-trigger="every 3s"' in part and 'data-state="queued"' in part
    assert "about 1 minute left" in part  # 2 runs of the quick profile's 3 s steps: under a minute, said as one


def test_pause_resume_and_cancel_from_the_page(client, profiles):
    user = make_user("campaign-actions-op", operator=True)
    campaign = launch_campaign(name="acts", profile=profiles[SYSBENCH], overrides={}, targets=[make_targets()["mysql"]],
                               user=user, repeats=2)
    other = make_user("campaign-actions-other", operator=True)
    client.force_login(other)
    assert client.post(f"/runs/campaigns/{campaign.pk}/pause/").status_code == 403
    client.force_login(user)
    assert client.post(f"/runs/campaigns/{campaign.pk}/pause/").status_code == 302
    page = client.get(f"/runs/campaigns/{campaign.pk}/").content.decode()
    assert 'data-state="paused"' in page and "/resume/" in page
    assert client.post(f"/runs/campaigns/{campaign.pk}/resume/").status_code == 302
    assert client.post(f"/runs/campaigns/{campaign.pk}/cancel/").status_code == 302
    assert set(Run.objects.filter(repeat_group__campaign_cell__campaign=campaign).values_list("state", flat=True)) == {
        RunState.CANCELLED}
    assert client.get(f"/runs/campaigns/{campaign.pk}/bogus/").status_code == 404
    assert client.get(f"/runs/campaigns/{campaign.pk}/pause/").status_code == 405


def queries(client, path):
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path).status_code == 200
    return len(captured)


def test_the_list_and_a_page_make_as_many_queries_for_one_or_many(client, profiles, operator_api):
    user = make_user("campaign-queries-op", operator=True)
    client.force_login(user)
    mysql = make_targets()["mysql"]
    one = launch_campaign(name="one", profile=profiles[SYSBENCH], overrides={}, targets=[mysql], user=user, repeats=2)
    single = (queries(client, "/runs/campaigns/"), queries(client, f"/runs/campaigns/{one.pk}/"),
              queries(operator_api, "/api/v1/campaigns/"))
    many_targets = [mysql, sized_mysql("mysql-4-8", 4, 8), sized_mysql("mysql-8-16", 8, 16)]
    for name in ("two", "three"):
        launch_campaign(name=name, profile=profiles[SYSBENCH], overrides={}, targets=many_targets, user=user, repeats=3)
    big = Campaign.objects.get(name="three")
    assert (queries(client, "/runs/campaigns/"), queries(client, f"/runs/campaigns/{big.pk}/"),
            queries(operator_api, "/api/v1/campaigns/")) == single
