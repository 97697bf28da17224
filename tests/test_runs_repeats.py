"""Repeats with real runs: a launch asking for N repeats is N ordinary runs of one set-up (a repeat group),
run one after another on the target by the real worker; the run page, the series (page and API) and the
export show the group's mean and sample standard deviation, recomputed here by hand from the TPS the tools
reported. The history counts a group as one result, its mean: judged once, when its last run has ended,
never against its own runs, and counted once among the earlier results of later judgements; a group run
against a deliberately slowed target (index scans off for the test's role, as in test_runs_history) is one
regression, listed once. Bad `repeats` is refused naming the field, and nothing is stored."""

import statistics

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runs.models import MAX_REPEATS, RepeatGroup, Run, RunState

from testbed.runs_support import (
    make_targets, make_user, wait_final, wait_for,
)
from .test_runs_history import by_hand, throttle
from testbed.runs_support import seed_profiles_for_tests

PROFILE = "pgbench-ro-quick"


def launch(api, target, repeats=1):
    body = {"target": target.pk, "profile": PROFILE, "overrides": {"duration_s": 3}}
    if repeats != 1:
        body["repeats"] = repeats
    response = api.post("/api/v1/runs/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def finish(run_ids, timeout=240):
    runs = [wait_final(i, timeout=timeout) for i in run_ids]
    assert [r.state for r in runs] == [RunState.SUCCEEDED] * len(runs), [r.reason for r in runs]
    # The verdict is written just after the state (a group's when its last run has ended): wait for it.
    return wait_for(lambda: (found := list(Run.objects.filter(pk__in=run_ids).order_by("pk"))) and all(r.trend for r in found)
                    and found, timeout=30, message="the verdicts")


def group_runs(api, answer):
    group = answer["repeat_group"]
    listing = api.get(f"/api/v1/runs/?repeat_group={group['id']}").json()["results"]
    return sorted(r["id"] for r in listing)


@pytest.mark.django_db(transaction=True)
def test_repeats_are_one_result_with_mean_and_standard_deviation(committed, worker, client):
    operator = make_user("repeat-op", operator=True)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=operator).key}")
    target = make_targets()["postgresql"]

    singles = finish([launch(api, target)["id"] for _ in range(5)])  # a result is judged from 5 earlier ones
    answer = launch(api, target, repeats=3)
    assert answer["repeat_group"] == {"id": answer["repeat_group"]["id"], "count": 3, "index": 1}
    normal = finish(group_runs(api, answer))
    assert [r.repeat_index for r in normal] == [1, 2, 3] and normal[0].pk == answer["id"]
    # One run at a time on the target: each repeat started after the one before it had ended.
    ordered = sorted(normal, key=lambda r: r.started_at)
    assert all(a.finished_at <= b.started_at for a, b in zip(ordered, ordered[1:]))

    single_tps = [r.summary["tps"] for r in singles]
    normal_tps = [r.summary["tps"] for r in normal]
    normal_mean, normal_sd = statistics.fmean(normal_tps), statistics.stdev(normal_tps)
    # Judged once, as one result (its mean), against the five single runs only: never against its own runs
    # (the rule by hand: test_runs_history.by_hand, the prediction interval of issue 46).
    expected, change, center = by_hand(normal_mean, single_tps)
    for run in normal:
        assert run.regression is expected and run.trend["earlier_results"] == [[r.pk] for r in singles]
        assert run.trend["tps"] == round(normal_mean, 2) and run.trend["change_pct"] == change and run.trend["center"] == center
        assert run.trend["repeat_group"]["n"] == 3 and run.trend["repeat_group"]["runs"] == [r.pk for r in normal]
        assert run.trend["repeat_group"]["mean"] == round(normal_mean, 2)
        assert run.trend["repeat_group"]["stdev"] == round(normal_sd, 2)
    # Whether this normal group is flagged depends on the machine's noise (CI's shared cores once moved three
    # 3 s runs by more than 2 sd): the rule is checked above against the same numbers by hand, either way.

    # A group against the slowed target: the group's mean is judged against 6 results, the normal group once (unless
    # that group was itself judged a regression: then it stays out of the baseline).
    throttle(True)
    try:
        slowed_answer = launch(api, target, repeats=2)
        slowed = finish(group_runs(api, slowed_answer))
    finally:
        throttle(False)
    slowed_tps = [r.summary["tps"] for r in slowed]
    slowed_mean = statistics.fmean(slowed_tps)
    baseline = single_tps + ([] if expected else [normal_mean])
    flagged, change, center = by_hand(slowed_mean, baseline)
    assert flagged, (single_tps, normal_tps, slowed_tps)  # the throttle really slowed it (by hand)
    for run in slowed:
        assert run.regression is True and run.trend["change_pct"] == change and run.trend["center"] == center
        assert run.trend["earlier_results"] == [[r.pk] for r in singles] + ([] if expected else [[r.pk for r in normal]])
    # Each flagged group listed once (its first run), newest first, on the page and in the API.
    flagged_groups = [slowed[0].pk] + ([normal[0].pk] if expected else [])
    listed = api.get("/api/v1/runs/regressions/").json()["results"]
    assert [r["id"] for r in listed] == flagged_groups
    client.force_login(operator)
    listing = client.get("/runs/").content.decode()
    assert listing.count('class="muted repeat-of"') == 5 and "repeat 2/3" in listing and "repeat 2/2" in listing
    page = client.get("/runs/regressions/").content.decode()
    assert page.count("<tr data-run=") == len(flagged_groups) and f'data-run="{slowed[0].pk}"' in page
    assert f"{round(slowed_mean, 2):.2f}" in page and "repeat-mean" in page

    # The series: every run, and each group's n, mean and standard deviation (by hand, as shown: 2 decimals).
    series = api.get(f"/api/v1/runs/series/?target={target.pk}&profile={PROFILE}").json()
    assert [r["id"] for r in series["runs"]] == [r.pk for r in singles + normal + slowed]
    # With the mean's 95 % interval (issue 33.3): mean +- t(0.975, n - 1) sd / sqrt(n), t from the tables (9 decimals:
    # the figures run to tens of thousands of TPS, printed to 0.01) and the coefficient of variation (issue 46).
    normal_half = 4.302652730 * normal_sd / 3 ** 0.5
    slowed_half = 12.706204736 * statistics.stdev(slowed_tps) / 2 ** 0.5
    assert series["repeat_groups"] == [
        {"id": normal[0].repeat_group_id, "count": 3, "runs": [r.pk for r in normal], "n": 3,
         "mean_tps": round(normal_mean, 2), "stdev_tps": round(normal_sd, 2), "ci_low_tps": round(normal_mean - normal_half, 2),
         "ci_high_tps": round(normal_mean + normal_half, 2), "cv": round(normal_sd / normal_mean, 4), "regression": expected},
        {"id": slowed[0].repeat_group_id, "count": 2, "runs": [r.pk for r in slowed], "n": 2,
         "mean_tps": round(slowed_mean, 2), "stdev_tps": round(statistics.stdev(slowed_tps), 2),
         "ci_low_tps": round(slowed_mean - slowed_half, 2), "ci_high_tps": round(slowed_mean + slowed_half, 2),
         "cv": round(statistics.stdev(slowed_tps) / slowed_mean, 4), "regression": True}]
    html = client.get(f"/runs/series/?target={target.pk}&profile={normal[0].profile_id}").content.decode()
    row = html.split(f'data-repeat-group="{normal[0].repeat_group_id}"')[1].split("</tr>")[0]
    assert f"{normal_mean:.2f}" in row and f"{normal_sd:.2f}" in row and "3 / 3" in row

    # The run page of a repeat: its place, its siblings, the group's mean and standard deviation.
    html = client.get(f"/runs/{normal[1].pk}/").content.decode()
    section = html.split('id="run-repeats"')[1].split("</section>")[0]
    assert f"#{normal[0].pk}" in section and f"#{normal[2].pk}" in section
    assert f"<strong>{normal_mean:.2f}</strong>" in section and f"<strong>{normal_sd:.2f}</strong>" in section
    assert f"95 % interval of the mean {normal_mean - normal_half:.2f}–{normal_mean + normal_half:.2f}" in section
    assert f"run={normal[0].pk}&amp;run={normal[1].pk}&amp;run={normal[2].pk}" in section  # compare the repeats

    # The export of a repeat carries the group, the verdict and the series it was judged in.
    record = api.get(f"/api/v1/runs/{slowed[1].pk}/export/").json()
    assert record["format_version"] == 4 and {"origin", "regression", "series", "repeat_group"} <= set(record["fields"])
    assert record["repeat_group"]["runs"] == [{"id": r.pk, "state": "succeeded", "tps": r.summary["tps"]} for r in slowed]
    assert record["repeat_group"]["index"] == 2 and record["repeat_group"]["mean_tps"] == round(slowed_mean, 2)
    assert record["regression"]["regression"] is True and record["regression"]["trend"]["center"] == center
    assert record["regression"]["rule"]["threshold_pct"] == 2.5  # the practical threshold (issue 46)
    all_tps = single_tps + normal_tps + slowed_tps
    assert [r["id"] for r in record["series"]["runs"]] == [r.pk for r in singles + normal + slowed]
    assert record["series"]["n"] == 10 and record["series"]["mean_tps"] == round(statistics.fmean(all_tps), 2)
    assert record["series"]["stdev_tps"] == round(statistics.stdev(all_tps), 2)
    assert record["origin"] == {"schedule": None, "requested_by": "repeat-op", "reproduces": None}


@pytest.mark.django_db(transaction=True)
def test_the_form_launches_sysbench_repeats_and_the_run_page_shows_their_mean(committed, worker, client):
    operator = make_user("repeat-form-op", operator=True)
    target = make_targets()["mysql"]
    from runs.models import BenchmarkProfile

    profile = BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick")
    client.force_login(operator)
    form = client.get(f"/runs/new/?target={target.pk}&profile={profile.pk}").content.decode()
    assert 'name="repeats"' in form and f'max="{MAX_REPEATS}"' in form
    response = client.post("/runs/new/", {"target": target.pk, "profile": profile.pk, "threads": "2", "duration_s": "3",
                                          "report_interval_s": "1", "warmup_s": "0", "tables": "1", "rows_per_table": "1000",
                                          "repeats": "2"})
    assert response.status_code == 302, response.content.decode()[:2000]
    first = Run.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))
    runs = finish(list(Run.objects.filter(repeat_group=first.repeat_group).order_by("repeat_index").values_list("pk", flat=True)))
    assert [r.repeat_index for r in runs] == [1, 2] and {r.params["threads"] for r in runs} == {2}
    tps = [r.summary["tps"] for r in runs]
    html = client.get(f"/runs/{runs[0].pk}/").content.decode()
    section = html.split('id="run-repeats"')[1].split("</section>")[0]
    assert f"<strong>{statistics.fmean(tps):.2f}</strong>" in section and f"<strong>{statistics.stdev(tps):.2f}</strong>" in section
    assert runs[0].regression is None and runs[1].regression is None  # no earlier results of this set-up: not judged


@pytest.mark.django_db
def test_bad_repeats_are_refused_naming_the_field_and_nothing_is_stored(client):

    from runs.models import BenchmarkProfile, Target

    seed_profiles_for_tests()
    operator = make_user("repeat-bad-op", operator=True)
    target = Target.objects.create(name="pg", engine="postgresql", host="127.0.0.1", port=5432, database="db", user="u")
    api = APIClient()
    api.force_authenticate(operator)
    for bad in (0, MAX_REPEATS + 1, "two", 1.5, True, "２", "١", "𝟐"):  # not ASCII digits (issue 23.8)
        response = api.post("/api/v1/runs/", {"target": target.pk, "profile": PROFILE, "repeats": bad}, format="json")
        body = response.json()
        assert response.status_code == 400 and set(body["errors"]) == {"repeats"} and body["code"] == "invalid", (bad, body)
    client.force_login(operator)
    profile = BenchmarkProfile.objects.get(slug=PROFILE)
    for bad in ("0", str(MAX_REPEATS + 1), "x"):
        page = client.post("/runs/new/", {"target": target.pk, "profile": profile.pk, "repeats": bad})
        assert page.status_code == 200 and "repeats" in page.context["form"].errors, bad
    assert not Run.objects.exists() and not RepeatGroup.objects.exists()
    # Default: one ordinary run, no group.
    single = api.post("/api/v1/runs/", {"target": target.pk, "profile": PROFILE}, format="json").json()
    assert single["repeat_group"] is None and not RepeatGroup.objects.exists()
    grouped = api.post("/api/v1/runs/", {"target": target.pk, "profile": PROFILE, "repeats": MAX_REPEATS}, format="json").json()
    assert grouped["repeat_group"]["count"] == MAX_REPEATS
    assert Run.objects.filter(repeat_group_id=grouped["repeat_group"]["id"]).count() == MAX_REPEATS
    # Until every run of the group has ended it is not judged; the run page says so.
    client.force_login(operator)
    html = client.get(f"/runs/{grouped['id']}/").content.decode()
    section = html.split('id="run-repeats"')[1].split("</section>")[0]
    assert f"Repeat 1 of {MAX_REPEATS}" in section and "once all its runs have ended" in section
