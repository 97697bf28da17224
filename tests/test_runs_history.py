"""History and regressions with real runs: the same pgbench profile against the machine's PostgreSQL,
three normal runs, then one against a deliberately slowed target (index scans turned off for the test's
own role in the test's own database, so every lookup of pgbench_accounts reads the whole table; restored
afterwards), then a normal repeat. The slowed run is flagged a regression on the run page, the runs list,
the series, the regressions page and the API, and stays out of the earlier results the repeat is judged
against. The rule's numbers are recomputed here by hand from the tools' own reported TPS, with the default settings
the worker runs with (issue 46: below the 95 % prediction interval of the last 10 earlier results on log TPS and more
than 2.5 % below their geometric mean, judged from 5 earlier results)."""

import math
import statistics

import psycopg
import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runs.models import Run, RunState

from testbed.runs_support import (
    DB_USER, PG_DB, make_targets, make_user, wait_final,
)
from testbed.runs_support import seed_profiles_for_tests

PROFILE = "pgbench-ro-quick"
pytestmark = pytest.mark.django_db(transaction=True)


def launch_and_finish(api, target):
    # 3 s, as the quick profile: the planted regression (index scans off) costs the run most of its TPS, and the repeat
    # is judged against a band that holds the slowed run, so neither verdict rests on a long window.
    response = api.post("/api/v1/runs/", {"target": target.pk, "profile": PROFILE, "overrides": {"duration_s": 3}}, format="json")
    assert response.status_code == 201, response.content
    run = wait_final(response.json()["id"], timeout=180)
    assert run.state == RunState.SUCCEEDED, run.reason
    return run


def throttle(on):
    """Index scans off (or back to the server's default) for the bench role in the bench database only."""
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as pg:
        for name in ("enable_indexscan", "enable_bitmapscan", "enable_indexonlyscan"):
            if on:
                pg.execute(f"ALTER ROLE {DB_USER} IN DATABASE {PG_DB} SET {name} = off")
            else:
                pg.execute(f"ALTER ROLE {DB_USER} IN DATABASE {PG_DB} RESET {name}")


def by_hand(tps, earlier):
    """(regression, change % against the geometric mean, that mean) by the rule's formula, t(0.975, n - 1) from the
    tables (n = 5 or 6 here)."""
    logs = [math.log(v) for v in earlier[-10:]]
    n = len(logs)
    m, s = statistics.fmean(logs), statistics.stdev(logs)
    low = math.exp(m - {4: 2.776, 5: 2.571}[n - 1] * s * math.sqrt(1 + 1 / n))
    center = math.exp(m)
    return tps < low and 100 * (1 - tps / center) > 2.5, round(100 * (tps / center - 1), 1), round(center, 2)


def test_a_planted_regression_is_flagged_and_a_normal_repeat_is_not(committed, worker, client):
    operator = make_user("history-op", operator=True)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=operator).key}")
    target = make_targets()["postgresql"]

    normal = [launch_and_finish(api, target) for _ in range(5)]
    # Too few earlier results (fewer than 5): not judged.
    assert [r.regression for r in Run.objects.filter(pk__in=[r.pk for r in normal]).order_by("pk")] == [None] * 5
    throttle(True)
    try:
        slowed = launch_and_finish(api, target)
    finally:
        throttle(False)
    repeat = launch_and_finish(api, target)
    slowed.refresh_from_db()
    repeat.refresh_from_db()

    tps = [r.summary["tps"] for r in normal]
    flagged, change, center = by_hand(slowed.summary["tps"], tps)
    assert flagged, (tps, slowed.summary["tps"])  # the throttle really slowed it (by hand, before the code's verdict)
    assert slowed.regression is True
    assert slowed.trend["earlier_runs"] == [r.pk for r in normal] and slowed.trend["change_pct"] == change
    assert slowed.trend["center"] == center and slowed.trend["n"] == 5
    # The repeat is judged against the normal runs only: the slowed one, a regression, stays out of the baseline.
    expected_repeat, change, _ = by_hand(repeat.summary["tps"], tps)
    assert repeat.trend["earlier_runs"] == [r.pk for r in normal]
    assert repeat.regression is expected_repeat and repeat.trend["change_pct"] == change
    # The server setting that slowed it is what the comparison names.
    data = api.get(f"/api/v1/runs/compare/?run={normal[-1].pk}&run={slowed.pk}").json()
    settings_differing = {d["label"]: d["values"] for d in data["differences"] if d["group"] == "server_setting"}
    assert settings_differing["enable_indexscan"] == ["on", "off"]
    assert not [d for d in data["differences"] if d["group"] == "parameter"]

    # Shown everywhere: API, runs list, run page, series, regressions page.
    assert [r["id"] for r in api.get("/api/v1/runs/regressions/").json()["results"]] == [repeat.pk] * expected_repeat + [slowed.pk]
    assert api.get(f"/api/v1/runs/{slowed.pk}/").json()["regression"] is True
    assert api.get(f"/api/v1/runs/{repeat.pk}/").json()["regression"] is expected_repeat
    series = api.get(f"/api/v1/runs/series/?target={target.pk}&profile={PROFILE}").json()
    assert [r["id"] for r in series["runs"]] == [r.pk for r in normal] + [slowed.pk, repeat.pk]
    assert [r["regression"] for r in series["runs"]] == [None] * 5 + [True, expected_repeat]
    all_tps = tps + [slowed.summary["tps"], repeat.summary["tps"]]
    assert series["setups"][0]["n"] == 7 and series["setups"][0]["mean_tps"] == round(statistics.fmean(all_tps), 2)
    client.force_login(operator)
    listing = client.get("/runs/").content.decode()
    assert listing.count('class="warning regression"') == 1 + expected_repeat
    assert 'id="run-regression"' in client.get(f"/runs/{slowed.pk}/").content.decode()
    assert ('id="run-regression"' in client.get(f"/runs/{repeat.pk}/").content.decode()) is expected_repeat
    page = client.get("/runs/regressions/").content.decode()
    assert f'data-run="{slowed.pk}"' in page and (f'data-run="{repeat.pk}"' in page) is expected_repeat
    page = client.get(f"/runs/series/?target={target.pk}&profile={slowed.profile_id}").content.decode()
    assert page.count('class="warning regression"') == 1 + expected_repeat and "series-chart" in page


@pytest.mark.django_db(transaction=False)
def test_series_and_regressions_pages_name_bad_input_and_keep_their_query_count(client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from runs.models import BenchmarkProfile, Target

    seed_profiles_for_tests()
    operator = make_user("history-op2", operator=True)
    client.force_login(operator)
    api = APIClient()
    api.force_authenticate(operator)
    page = client.get("/runs/series/?target=abc")
    assert page.status_code == 400 and 'data-field="target"' in page.content.decode() and 'data-field="profile"' in page.content.decode()
    response = api.get("/api/v1/runs/series/?target=999999")
    assert response.status_code == 400 and set(response.json()["errors"]) == {"target", "profile"}
    target = Target.objects.create(name="pg", engine="postgresql", host="127.0.0.1", port=5432, database="db", user="u")
    profile = BenchmarkProfile.objects.get(slug=PROFILE)
    counts = []
    for n in (1, 5):
        Run.objects.filter(target=target).delete()
        for i in range(n):
            Run.objects.create(target=target, profile=profile, params=profile.resolve({}), state=RunState.SUCCEEDED,
                               summary={"tps": 50.0}, regression=True, trend={"median": 100.0, "band": [90.0, 110.0],
                                                                            "change_pct": -50.0, "earlier_runs": [1, 2, 3]})
        with CaptureQueriesContext(connection) as regressions:
            assert client.get("/runs/regressions/").content.decode().count('<tr data-run="') == n
        with CaptureQueriesContext(connection) as series:
            assert client.get(f"/runs/series/?target={target.pk}&profile={profile.pk}").status_code == 200
        with CaptureQueriesContext(connection) as listing:
            assert client.get("/runs/").content.decode().count('class="warning regression"') == n
        counts.append((len(regressions), len(series), len(listing)))
    assert counts[0] == counts[1], counts
