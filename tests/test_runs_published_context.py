"""A published internal row carries its own run's context (issue 33, points 1-2): real sysbench runs on the
machine's MariaDB (a thread sweep and a single run of another duration) are published through the pages; each row
is filed under a methodology describing its own set-up (the threads of the step it publishes, duration, data size,
tool and server version, TLS, client hosts, round trip), with its flags, its TPS interval and a link to a public
record of the run, on the document page, in the API and in the CSV. Retracting a set-up's last row leaves no empty
table or methodology block. Expected set-ups are the parameters launched here; intervals are recomputed here by
hand from the samples the API returns (batch means, as docs/measurements.md states the method)."""

import csv
import io
import math
import re
import statistics

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runs.models import Run, RunState
from whitepaper.models import Methodology, PublishedResult, ResultTable

from testbed.runs_support import DB_USER, PASSWORD, make_targets, make_user, wait_final

PROFILE = "sysbench-oltp-rw-mysql-quick"
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571}  # Student's t tables


def by_hand_interval(tps):
    """Batch means as docs/measurements.md states it: k = floor(sqrt(n)) / 2 + 1 batches (at least 2) of b = n // k
    consecutive samples, the earliest n - k b left out; mean of the batch means +- t(0.975, k-1) sd / sqrt(k). Fewer
    than 4 samples give no interval (a run of d seconds at 1 s reports prints d or d - 1 of them)."""
    n = len(tps)
    if n < 4:
        return None, None
    k = max(2, math.isqrt(n) // 2 + 1)
    b = n // k
    kept = tps[n - k * b:]
    means = [sum(kept[i * b:(i + 1) * b]) / b for i in range(k)]
    mean = sum(means) / k
    half = T_975[k - 1] * statistics.stdev(means) / math.sqrt(k)
    return round(mean - half, 2), round(mean + half, 2)


def launch(api, target, **overrides):
    response = api.post("/api/v1/runs/", {"target": target.pk, "profile": PROFILE, "overrides": overrides}, format="json")
    assert response.status_code == 201, response.content
    run = wait_final(response.json()["id"], timeout=180)
    assert run.state == RunState.SUCCEEDED, run.reason
    return run


def step_samples(api, run_id):
    rows = api.get(f"/api/v1/runs/{run_id}/samples/").json()["results"]
    by_step = {}
    for s in rows:
        if not s["warmup"]:
            by_step.setdefault(s["step"], []).append(s["tps"])
    return by_step


def methodology_block(html, slug):
    match = re.search(rf'<details id="methodology-{re.escape(slug)}".*?</details>', html, re.S)
    assert match, f"no methodology block {slug}"
    facts = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", match.group(0), re.S))
    return facts


@pytest.mark.django_db(transaction=True)
def test_each_published_row_describes_its_own_run_with_flags_interval_and_record(committed, worker, client):
    staff = make_user("context-staff", staff=True)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff).key}")
    target = make_targets()["mysql"]
    sweep = launch(api, target, thread_sweep=[2, 4], duration_s=6)
    single = launch(api, target, threads=4, duration_s=5)

    client.force_login(staff)
    for run in (sweep, single):
        # A MariaDB server's counters are server-wide: other suites on this machine can show as other load.
        assert client.post(f"/runs/{run.pk}/publish/", {"acknowledge_other_load": "on"}).status_code == 302
        run.refresh_from_db()
    sweep_row, single_row = sweep.published_result, single.published_result

    # Point 1: two set-ups, two methodologies; each states the threads of the step it publishes and its duration.
    best = max(sweep.summary["steps"], key=lambda s: s["tps"])
    assert sweep_row.table.methodology_id != single_row.table.methodology_id
    assert sweep_row.table_id != single_row.table_id
    document = client.get(sweep_row.table.document.get_absolute_url()).content.decode()
    sweep_facts = methodology_block(document, sweep_row.table.methodology.slug)
    single_facts = methodology_block(document, single_row.table.methodology.slug)
    assert sweep_facts["Threads"] == str(best["threads"]) and sweep_facts["Duration"] == "6 s"
    assert "best step of a sweep over 2, 4 threads" in sweep_facts["Thread sweep"]
    assert single_facts["Threads"] == "4" and single_facts["Duration"] == "5 s" and "Thread sweep" not in single_facts
    for facts, run in ((sweep_facts, sweep), (single_facts, single)):
        assert facts["Tables × rows"] == "1 × 1000"
        assert facts["Tool"] == f"sysbench {run.tool_version}"
        assert facts["Server version"] == run.server_version and facts["TLS"] == "disable"
        assert facts["Client hosts"] == "1" and facts["Client cores"] == str(run.client_cores)
        assert facts["Client-to-target round trip (ms, median)"] == str(round(run.round_trip["median_ms"], 1))
    # The sweep's row is the best step's TPS, under that step's threads.
    assert float(sweep_row.tps) == pytest.approx(best["tps"], abs=0.005)

    # Point 2: API, CSV and the document page carry the interval, the flags and the record.
    anonymous = APIClient()
    for run, row in ((sweep, sweep_row), (single, single_row)):
        body = anonymous.get(f"/api/v1/results/{row.pk}/").json()
        samples = step_samples(api, run.pk)
        step = best["step"] if run is sweep else 1
        low, high = by_hand_interval(samples[step])
        assert (body["tps_ci_low"], body["tps_ci_high"]) == (low, high)
        assert body["run"] == f"http://testserver/runs/{run.pk}/record/"
        assert body["client_bound"] == run.client_bound
        assert body["other_load"] == ({"steps": run.other_load, "acknowledged": True, "acknowledged_by": staff.username}
                                      if run.other_load else None)
        assert body["latency_caveat"] == "" and body["repeats"] is None
        cells = re.search(rf'<tr data-result="{row.pk}">(.*?)</tr>', document, re.S).group(1)
        assert f'href="/runs/{run.pk}/record/"' in cells
        if run is sweep:  # 6 s at 1 s reports: always 5 samples or more, so an interval
            assert low is not None
        assert (f"TPS 95 % interval {low:.2f}–{high:.2f}" in cells) if low is not None else "95 % interval" not in cells
        assert ('data-flag="client_bound"' in cells) is bool(run.client_bound)
        assert ('data-flag="other_load"' in cells) is bool(run.other_load)
    answer = anonymous.get("/api/v1/results/", {"format": "csv", "include_internal": "true", "document": "internal-measurements"})
    exported = list(csv.DictReader(io.StringIO(b"".join(answer.streaming_content).decode())))
    by_id = {int(r["id"]): r for r in exported}
    assert by_id[single_row.pk]["run"] == f"/runs/{single.pk}/record/"
    assert (by_id[sweep_row.pk]["tps_ci_low"], by_id[sweep_row.pk]["tps_ci_high"]) == tuple(
        str(v) for v in by_hand_interval(step_samples(api, sweep.pk)[best["step"]]))
    assert by_id[single_row.pk]["client_bound"] == str(single.client_bound).lower()

    # The public record: anyone may read it; it never names the target, its host, user or password.
    record = APIClient().get(f"/runs/{sweep.pk}/record/")
    assert record.status_code == 200
    text = record.content.decode()
    assert 'id="record-tps"' in text and 'id="record-ci"' in text and 'id="record-samples-data"' in text
    for secret in (target.name, DB_USER, PASSWORD, target.database):
        assert secret not in text
    assert re.search(r"127\.0\.0\.1", text) is None

    # Retract: the sweep's table and methodology go with its last row; the other set-up stays.
    sweep_table, sweep_method = sweep_row.table_id, sweep_row.table.methodology.slug
    assert client.post(f"/runs/{sweep.pk}/retract/", {"reason": "a toy sweep"}).status_code == 302
    assert not ResultTable.objects.filter(pk=sweep_table).exists() and not Methodology.objects.filter(slug=sweep_method).exists()
    page = client.get(single_row.table.document.get_absolute_url()).content.decode()
    assert f'id="methodology-{sweep_method}"' not in page and f'id="table-{sweep_row.table.position}"' not in page
    assert APIClient().get(f"/runs/{sweep.pk}/record/").status_code == 404  # no longer published
    assert client.post(f"/runs/{single.pk}/retract/", {"reason": "done"}).status_code == 302
    page = client.get(single_row.table.document.get_absolute_url()).content.decode()
    assert 'class="result-table"' not in page and '<details id="methodology-' not in page
    assert not PublishedResult.objects.filter(table__document__slug="internal-measurements").exists()


@pytest.mark.django_db
def test_identical_set_ups_share_a_methodology_and_any_difference_separates_them(client, staff_user, profiles):
    from .test_runs_trust import make_target

    quick = profiles[PROFILE]
    target = make_target("maria", "mysql", vcpus=2, memory_gb=4)

    def stored(**changes):
        fields = dict(target=target, profile=quick, params=quick.resolve({"threads": 4, "duration_s": 10}),
                      state=RunState.SUCCEEDED, server_version="10.11.19-MariaDB", tool_version="1.0.20", client_cores=2,
                      round_trip={"median_ms": 0.21}, tls={"mode": "disable"}, summary={"tps": 800.0, "qps": 16000.0, "threads": 4})
        fields.update(changes)
        return Run.objects.create(**fields)

    runs = [stored(), stored(round_trip={"median_ms": 0.19}),  # the same round trip to 0.1 ms: the same set-up
            stored(server_version="10.11.20-MariaDB"), stored(params=quick.resolve({"threads": 4, "duration_s": 20})),
            stored(tool_version="1.0.18"), stored(tls={"mode": "require"}), stored(client_cores=8),
            stored(round_trip={"median_ms": 2.6})]
    client.force_login(staff_user)
    for run in runs:
        assert client.post(f"/runs/{run.pk}/publish/").status_code == 302
    methodologies = [Run.objects.get(pk=r.pk).published_result.table.methodology_id for r in runs]
    assert methodologies[0] == methodologies[1]
    assert len(set(methodologies[1:])) == len(runs) - 1


@pytest.mark.django_db
def test_a_published_repeat_carries_its_groups_spread(client, staff_user, profiles):
    from runs.models import RepeatGroup

    from .test_runs_trust import make_target

    quick = profiles[PROFILE]
    target = make_target("maria", "mysql", vcpus=2, memory_gb=4)
    group = RepeatGroup.objects.create(count=3)
    runs = [Run.objects.create(target=target, profile=quick, params=quick.resolve({}), state=RunState.SUCCEEDED,
                               repeat_group=group, repeat_index=i, server_version="10.11.19-MariaDB", tool_version="1.0.20",
                               summary={"tps": tps, "qps": tps * 20, "threads": 2})
            for i, tps in enumerate((300.0, 330.0, 360.0), start=1)]
    client.force_login(staff_user)
    assert client.post(f"/runs/{runs[1].pk}/publish/").status_code == 302
    row = Run.objects.get(pk=runs[1].pk).published_result
    # 300, 330, 360: mean 330, sd 30, 95 % interval 330 +- 4.303 x 30 / sqrt(3) = 330 +- 74.53.
    repeats = APIClient().get(f"/api/v1/results/{row.pk}/").json()["repeats"]
    assert repeats == {"runs": [r.pk for r in runs], "n": 3, "mean": 330.0, "stdev": 30.0, "ci_low": 255.47,
                       "ci_high": 404.53, "method": "Student's t over the runs"}
    page = client.get(row.table.document.get_absolute_url()).content.decode()
    cells = re.search(rf'<tr data-result="{row.pk}">(.*?)</tr>', page, re.S).group(1)
    assert "repeat group of 3 runs: mean 330.0, standard deviation 30.0" in cells
