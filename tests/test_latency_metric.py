"""A lower-is-better metric end to end (issue 51.1): an internal row's p95 latency (metrics.Metric "latency_p95_ms",
higher_is_better=False), added by its declaration, a migration, its translations and these tests. It reaches the
explorer's filter and sort, the API, CSV and Parquet, and sizing, which for it answers the smallest flavour at or
BELOW the value asked. Published rows carry it: a run's p95 as sysbench printed it; a series the highest of its runs'.

Expected values are written by hand from the runs made here (the series) or read from the tool's own final report in
the run's log (the real run)."""

import csv
import io
import re
from decimal import Decimal

import pyarrow.parquet as pq
import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runs.models import RepeatGroup, Run, RunState, Target

from testbed.runs_support import logged_steps, make_targets, make_user, wait_final

PROFILE = "sysbench-oltp-rw-mysql-quick"


def series(profile, name, vcpus, memory_gb, p95s):
    target = Target(name=name, engine="mysql", host="127.0.0.1", port=3306, database="sbtest", user="bench",
                    vcpus=vcpus, memory_gb=memory_gb)
    target.set_password("x")
    target.save()
    group = RepeatGroup.objects.create(count=len(p95s))
    return [Run.objects.create(target=target, profile=profile, params=profile.resolve({}), state=RunState.SUCCEEDED,
                               repeat_group=group, repeat_index=i, server_version="10.11.19-MariaDB", tool_version="1.0.20",
                               summary={"tps": 300.0, "qps": 6000.0, "threads": 2, "latency_p95_ms": p95})
            for i, p95 in enumerate(p95s, start=1)]


@pytest.fixture
def published(client, staff_user, profiles):
    """Two series on two declared sizes: 2 vCPU / 4 GB with p95 12.00 and 15.50 ms (row: 15.50, the highest), and
    4 vCPU / 8 GB with 6.00 and 7.25 ms (row: 7.25)."""
    client.force_login(staff_user)
    rows = {}
    for name, vcpus, memory, p95s in (("small", 2, 4, (12.0, 15.5)), ("large", 4, 8, (6.0, 7.25))):
        runs = series(profiles[PROFILE], name, vcpus, memory, p95s)
        assert client.post(f"/runs/{runs[0].pk}/publish/").status_code == 302
        rows[name] = Run.objects.get(pk=runs[0].pk).published_result
    return rows


@pytest.mark.django_db
def test_a_series_publishes_the_highest_p95_of_its_runs(published):
    assert published["small"].latency_p95_ms == Decimal("15.50")
    assert published["large"].latency_p95_ms == Decimal("7.25")


@pytest.mark.django_db
def test_the_explorer_filters_and_sorts_it_and_the_exports_carry_it(published, client):
    api = "/api/v1/results/?include_internal=true&engine=mysql"
    ids = lambda query: [r["id"] for r in client.get(f"{api}&{query}").json()["results"]]  # noqa: E731
    small, large = published["small"].pk, published["large"].pk
    assert ids("max_latency_p95_ms=10") == [large]
    assert ids("min_latency_p95_ms=10") == [small]
    assert ids("min_latency_p95_ms=0&ordering=latency_p95_ms") == [large, small]
    assert ids("min_latency_p95_ms=0&ordering=-latency_p95_ms") == [small, large]
    answer = client.get(f"/api/v1/results/{large}/").json()
    assert answer["latency_p95_ms"] == 7.25
    body = b"".join(client.get(f"{api}&min_latency_p95_ms=0&format=csv").streaming_content).decode()
    cells = {row["id"]: row["latency_p95_ms"] for row in csv.DictReader(io.StringIO(body))}
    assert cells == {str(small): "15.50", str(large): "7.25"}
    parquet = b"".join(client.get(f"{api}&min_latency_p95_ms=0&format=parquet").streaming_content)
    table = pq.read_table(io.BytesIO(parquet)).to_pydict()
    assert sorted(zip(table["id"], [float(v) for v in table["latency_p95_ms"]])) == sorted([(small, 15.5), (large, 7.25)])
    # The explorer page offers it as a column and sorts by it, lower first when asked ascending.
    page = client.get("/explore/?include_internal=true&engine=mysql&cols=tps,latency_p95_ms&sort=latency_p95_ms&lang=en")
    html = page.content.decode()
    assert page.status_code == 200 and "p95 latency (ms)" in html
    assert html.index(f'data-result="{large}"') < html.index(f'data-result="{small}"')


@pytest.mark.django_db
def test_sizing_answers_the_smallest_flavour_at_or_below_the_latency_asked(published, client):
    def answered(target):
        body = client.get(f"/api/v1/sizing/?engine=mysql&metric=latency_p95_ms&target={target}&include_internal=true")
        assert body.status_code == 200, body.content
        return [(a["result"]["flavor"]["vcpus"], a["printed"]) for a in body.json()["answers"]]

    assert answered(10) == [(4, "7.25")]  # the 2-vCPU row's 15.50 ms is above 10: not an answer
    assert answered(20) == [(2, "15.50")]  # both at or below 20: the smallest flavour
    assert answered(5) == []  # none at or below 5 ms


@pytest.mark.django_db(transaction=True)
def test_a_published_run_carries_the_p95_sysbench_printed(committed, worker, client):
    staff = make_user("latency-staff", staff=True)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff).key}")
    response = api.post("/api/v1/runs/", {"target": make_targets()["mysql"].pk, "profile": PROFILE}, format="json")
    assert response.status_code == 201, response.content
    run = wait_final(response.json()["id"], timeout=120)
    assert run.state == RunState.SUCCEEDED, run.reason
    measured = [out for command, out in logged_steps(run.log) if command.split()[-1] == "run"][-1]
    printed = re.findall(r"^\s*95th percentile:\s+([\d.]+)", measured, re.M)
    assert len(printed) == 1, measured
    client.force_login(staff)
    assert client.post(f"/runs/{run.pk}/publish/", {"acknowledge_other_load": "on"}).status_code == 302
    row = Run.objects.get(pk=run.pk).published_result
    assert row.latency_p95_ms == Decimal(printed[0]).quantize(Decimal("0.01"))


@pytest.mark.django_db
def test_the_document_charts_no_latency_against_cores_but_its_table_shows_it(published, client):
    """A chart against vCPUs names its peak (the highest figure): a lower-is-better metric draws no chart of its own
    (whitepaper/charts.py CHART_METRICS), while the table prints the row's p95 beside its TPS."""
    import json

    html = client.get(published["large"].table.document.get_absolute_url() + "?lang=en").content.decode()
    charts = [json.loads(body) for body in re.findall(r'<script id="chart-[^"]*" type="application/json">(.*?)</script>',
                                                      html, re.S)]
    assert charts, "no chart on the internal document's page"
    drawn = {m["name"] for chart in charts for m in chart["metrics"]}
    assert "tps" in drawn and "latency_p95_ms" not in drawn
    assert "7.25" in html and "15.50" in html


@pytest.mark.django_db
@pytest.mark.parametrize("lang, most, least", [("en", "At most", "At least"), ("zh-hans", "至多", "至少")])
def test_the_sizing_form_says_at_most_for_a_latency(client, lang, most, least):
    """The value asked is a ceiling for a lower-is-better metric: the form said "At least 10" beside "p95 latency"."""
    latency = client.get(f"/sizing/?engine=mysql&metric=latency_p95_ms&target=10&lang={lang}").content.decode()
    tps = client.get(f"/sizing/?engine=mysql&metric=tps&target=3000&lang={lang}").content.decode()
    label = re.compile(r'<label for="id_target">([^<:：]*)')
    assert label.search(latency).group(1).strip() == most
    assert label.search(tps).group(1).strip() == least
