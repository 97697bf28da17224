"""Noise is not reported as a difference (issues 33.3, 33.5 and 46): real runs on the machine's MariaDB and PostgreSQL.
Two single runs of one sysbench set-up are compared: the page and the API give the % from the tools' own reports and
say "single-run" (one run says nothing about the spread between runs), never "faster" or "slower"; each run's own
samples only judge its stability. MariaDB against PostgreSQL warns that engines and tools differ, and folds the
server settings only one of the servers has. The regression check says which change it cannot detect where the
earlier results spread more than the threshold, and "inside the prediction interval" where it can."""

import math
import re
import statistics
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runs import actions
from runs.models import Run, RunState

from testbed.runs_support import make_targets, make_user, wait_final


def launch(api, target, profile, **overrides):
    response = api.post("/api/v1/runs/", {"target": target.pk, "profile": profile, "overrides": overrides}, format="json")
    assert response.status_code == 201, response.content
    run = wait_final(response.json()["id"], timeout=180)
    assert run.state == RunState.SUCCEEDED, run.reason
    return run


def printed_tps(run):
    """The TPS sysbench printed in the run's log ('transactions: N (X per sec.)'), not the engine's summary."""
    return float(re.findall(r"transactions:\s+\d+\s+\(([0-9.]+) per sec\.\)", run.log)[-1])


@pytest.mark.django_db(transaction=True)
def test_compare_says_within_or_beyond_noise_and_warns_when_engines_and_tools_differ(committed, worker, client):
    operator = make_user("noise-op", operator=True)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=operator).key}")
    targets = make_targets()
    one = launch(api, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=6)
    two = launch(api, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=6)
    pg = launch(api, targets["postgresql"], "pgbench-ro-quick", duration_s=6)

    pct = 100 * (printed_tps(two) - printed_tps(one)) / printed_tps(one)
    data = api.get(f"/api/v1/runs/compare/?run={one.pk}&run={two.pk}&base={one.pk}").json()
    [comparison] = data["comparisons"]
    assert comparison["verdict"] == "single-run" and comparison["ratio_ci_low"] is None and comparison["entry"] == f"run:{two.pk}"
    assert abs(comparison["pct"] - pct) <= 0.06  # the % as printed, to its 0.1
    assert [e["n"] for e in data["entries"]] == [1, 1] and data["warnings"] == []
    # 6 s at 1 s reports: fewer than 10 samples, too short to judge a run's stability.
    assert all(r["stability"] is None for r in data["results"])
    client.force_login(operator)
    html = client.get(f"/runs/compare/?run={one.pk}&run={two.pk}&base={one.pk}").content.decode()
    cell = re.search(rf'<tr data-run="{two.pk}".*?<td class="pct[^"]*"[^>]*>(.*?)</td>', html, re.S).group(1)
    assert 'data-verdict="single-run"' in cell and "n = 1: the spread between runs is unknown" in cell
    assert f"{comparison['pct']:+.1f} %" in cell and "faster" not in cell and "slower" not in cell

    # MariaDB against PostgreSQL: said first; the settings only one server has are folded below the rest.
    data = api.get(f"/api/v1/runs/compare/?run={one.pk}&run={pg.pk}").json()
    assert [w["key"] for w in data["warnings"]] == ["engines", "tools"]
    # A setting one server has and the other lacks; an empty value reads as "–" on both sides, so it does not differ.
    settings = {**one.server_settings, **pg.server_settings}
    only_one = {n for n in set(one.server_settings) ^ set(pg.server_settings) if settings[n] not in (None, "")}
    folded = {d["label"] for d in data["differences"] if d["folded"]}
    assert folded == only_one and len(only_one) > 100
    kinds = [d["folded"] for d in data["differences"] if d["group"] == "server_setting"]
    assert kinds == sorted(kinds)  # the settings both servers have come first
    html = client.get(f"/runs/compare/?run={one.pk}&run={pg.pk}").content.decode()
    assert 'data-warning="engines"' in html and 'data-warning="tools"' in html
    visible, _sep, hidden = html.partition('<details id="compare-settings-folded">')
    assert f"{len(only_one)} server settings exist on only some of these servers" in hidden
    shown_rows = re.findall(r'<tr class="differs" data-aspect="setting:', visible)
    assert len(shown_rows) == len([d for d in data["differences"] if d["group"] == "server_setting" and not d["folded"]])


def prediction_by_hand(tps, earlier):
    """(change %, detectable %, low, high) by the rule's formula; t(0.975, 4) = 2.776 from the tables."""
    logs = [math.log(v) for v in earlier]
    m, sd = statistics.fmean(logs), statistics.stdev(logs)
    half = 2.776 * sd * math.sqrt(1 + 1 / len(logs))
    return (round(100 * (tps / math.exp(m) - 1), 1), round(100 * (1 - math.exp(-half)), 1),
            round(math.exp(m - half), 2), round(math.exp(m + half), 2))


@pytest.mark.django_db
def test_the_regression_check_says_what_it_cannot_detect_instead_of_within_noise(client, operator_user, profiles):
    from .test_runs_trust import make_target

    quick = profiles["sysbench-oltp-rw-mysql-quick"]
    client.force_login(operator_user)
    for name, earlier, tps, shown in (
            # Spread 8 %: the interval's lower half is about 21 % wide, so a smaller drop cannot be seen.
            ("wide", (100.0, 110.0, 90.0, 105.0, 95.0), 104.0, "cannot detect a change under"),
            # Spread 0.4 %: a change beyond 1.2 % would be seen; 100.3 lies inside the interval.
            ("tight", (100.0, 100.5, 99.5, 100.2, 99.8), 100.3, "inside the 95 % prediction interval")):
        target, params = make_target(name), quick.resolve({})
        for minutes, value in zip((50, 40, 30, 20, 10), earlier):
            Run.objects.create(target=target, profile=quick, params=params, state=RunState.SUCCEEDED, summary={"tps": value},
                               finished_at=timezone.now() - timedelta(minutes=minutes))
        run = Run.objects.create(target=target, profile=quick, params=params, state=RunState.CLEANING_UP)
        assert actions.succeed(run, {"tps": tps})
        run.refresh_from_db()
        change, detectable, low, high = prediction_by_hand(tps, earlier)
        assert run.regression is False and run.trend["change_pct"] == change and run.trend["interval"] == [low, high]
        assert run.trend["detectable_pct"] == detectable and run.trend["cannot_detect"] is (detectable > 2.5)
        page = client.get(f"/runs/{run.pk}/").content.decode()
        assert shown in page and "within noise" not in page
        if name == "wide":
            assert f"cannot detect a change under {detectable} %" in page
        series = client.get(f"/runs/series/?target={target.pk}&profile={quick.pk}").content.decode()
        row = re.search(rf'<tr data-run="{run.pk}">(.*?)</tr>', series, re.S).group(1)
        assert shown in row and f"{change:+.1f} %" in row
