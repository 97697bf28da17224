"""Compare: a series is one vendor + family + memory ratio (+ data size) of one edition, each flavour's newest
figure by default; a size where several lines of a selection have a row asks which; chart and table follow the
one metric in the URL (issue 21.3, and 21.1 for compare).

Expected values from the data files:
- whitepaper/data/huawei-2025-10-21-mysql.yaml, MySQL 5.7 at 8 vCPU / 16 GB: general-enhanced 1:2 (表 3-1)
  1768.01 TPS, general 1:2 (表 3-4) 1338, Kunpeng general-enhanced 1:2 (表 3-8) 1462; the 2018 paper
  (huawei-2018-12-11-rds.yaml) prints compute-optimized 1:2 8 vCPU / 16 GB as well.
- Huawei PostgreSQL 12 dedicated 1:4, 64 vCPU / 256 GB: 10929.30 TPS in the 2023-08-03 paper, 8839.4 in the
  2025-10-21 PostgreSQL paper (table 2-3): (8839.4 - 10929.30) / 10929.30 = -19.1 %.
"""

import json
import re
from urllib.parse import quote

import pytest

pytestmark = pytest.mark.django_db
API = "/api/v1/compare"
HUAWEI_57 = quote("engine=mysql&version=5.7&vendor=huawei", safe="")
ALIBABA_57 = quote("engine=mysql&version=5.7&vendor=alibaba", safe="")
PG12_DEDICATED = quote("engine=postgresql&version=12&vendor=huawei&family=dedicated&memory_ratio=1:4", safe="")
PG13_DEDICATED = quote("engine=postgresql&version=13&vendor=huawei&family=dedicated&memory_ratio=1:4", safe="")


def size(body, vcpus, memory_gb):
    return next(r for r in body["sizes"] if (r["vcpus"], r["memory_gb"]) == (vcpus, memory_gb))


def chart_of(html):
    return json.loads(re.search(r'<script id="chart-compare-data" type="application/json">(.*?)</script>', html, re.S).group(1))


def test_a_size_with_several_rows_asks_which_instead_of_picking_one(client):
    body = client.get(f"{API}/?sel={HUAWEI_57}&sel={ALIBABA_57}").json()
    huawei = size(body, 8, 16)["cells"][0]
    assert huawei["value"] is None and huawei["printed"] is None and huawei["difference_pct"] is None
    printed = {c["line"]: c["printed"] for c in huawei["candidates"]}
    assert printed["General-enhanced · 1:2 · 2025"] == "1768.01"
    assert printed["General-purpose · 1:2 · 2025"] == "1338"
    assert printed["Kunpeng general-enhanced (ARM) · 1:2 · 2025"] == "1462"
    # Each candidate narrows the selection to its line: compared alone, it is the number with its difference.
    line = next(c for c in huawei["candidates"] if c["printed"] == "1768.01")
    narrowed = client.get(f"{API}/?sel={quote(line['sel'], safe='')}&sel={ALIBABA_57}").json()
    cell = size(narrowed, 8, 16)["cells"][0]
    assert cell["printed"] == "1768.01" and cell["candidates"] == []
    html = client.get(f"/compare/?sel={HUAWEI_57}&sel={ALIBABA_57}&lang=en").content.decode()
    assert "Several lines have this size; which?" in html and "1768.01" in html and "1462" in html


def test_each_line_is_one_family_ratio_and_edition_never_one_zigzag(client):
    html = client.get(f"/compare/?sel={HUAWEI_57}&sel={ALIBABA_57}&lang=en").content.decode()
    chart = chart_of(html)
    body = client.get(f"{API}/?sel={HUAWEI_57}&sel={ALIBABA_57}").json()
    lines = [line for s in body["selections"] for line in s["lines"]]
    assert len(chart["series"]) == len(lines) > 2
    for series in chart["series"]:
        sizes = [(p["x"], p["memory_gb"]) for p in series["points"]]
        assert len(sizes) == len(set(sizes)), series["label"]  # one point per size: no vertical jumps
    labels = [s["label"] for s in chart["series"]]
    assert "Huawei Cloud · MySQL 5.7 · Kunpeng general-enhanced (ARM) · 1:2 · 2025" in labels
    # By default the newest figure: the 2023 paper's MySQL 5.7 rows were all reprinted in 2025.
    assert not any("2023" in label for label in labels)


def test_newest_figure_by_default_older_one_named_and_one_click_away(client):
    body = client.get(f"{API}/?sel={PG12_DEDICATED}&sel={PG13_DEDICATED}&base=1").json()
    cell = size(body, 64, 256)["cells"][0]
    assert cell["printed"] == "8839.4"
    assert cell["revised_from"]["printed"] == "10929.30" and cell["revised_from"]["published"] == "2023-08-03"
    assert cell["revised_from"]["change_pct"] == -19.1
    html = client.get(f"/compare/?sel={PG12_DEDICATED}&sel={PG13_DEDICATED}&lang=en").content.decode()
    assert "revised from 10929.30 in 2023, -19.1 %" in html
    assert "Show every edition&#x27;s figures" in html or "Show every edition's figures" in html
    every = re.search(r'<a href="([^"]+)">Show every edition', html).group(1).replace("&amp;", "&")
    assert "latest%253Dfalse" in every or "latest%3Dfalse" in every
    everything = client.get(f"/compare/{every}&lang=en").content.decode()
    assert "Several lines have this size; which?" in everything  # 2023 and 2025 lines both at 64 vCPU
    assert "10929.30" in everything and "8839.4" in everything


def test_chart_and_table_follow_the_metric_in_the_url(client):
    html = client.get(f"/compare/?sel={HUAWEI_57}&sel={ALIBABA_57}&metric=tps&lang=en").content.decode()
    links = dict((m, u.replace("&amp;", "&")) for u, m in re.findall(r'<a class="button" href="([^"]+)" data-metric-link="(\w+)"', html))
    assert {"tps", "qps", "qps_normalised"} <= set(links)
    assert 'data-metric-link="tps" aria-current="true"' in html
    assert "metric=qps_normalised" in links["qps_normalised"]
    normalised = client.get(f"/compare/{links['qps_normalised']}&lang=en").content.decode()
    assert chart_of(normalised)["initial_metric"] == "qps_normalised"
    assert "QPS, normalised to 18 statements per transaction: difference against the baseline" in normalised
    assert 'data-metric-link="qps_normalised" aria-current="true"' in normalised


def test_compare_reads_a_fixed_number_of_queries(client, django_assert_max_num_queries, settings):
    from whitepaper.pages import local_pages

    settings.CATALOGUE_STAMP_TTL = 0
    local_pages.clear()
    with django_assert_max_num_queries(9):  # one per series selection, the menus, the older editions
        assert client.get(f"/compare/?sel={HUAWEI_57}&sel={ALIBABA_57}").status_code == 200


def test_a_data_size_is_part_of_a_line_and_a_series_key(client):
    # Alibaba PostgreSQL 10 (alibaba-2019-06-18-rds.yaml, 3.3): pg.x8.2xlarge.2 16 vCPU / 128 GB read-only QPS
    # 235592 at 1亿 hot rows, 221153 at 5亿, 211268 at 10亿: three lines, one size that asks which.
    pg10 = quote("engine=postgresql&version=10&vendor=alibaba&family=dedicated", safe="")
    body = client.get(f"{API}/?sel={pg10}&sel={PG13_DEDICATED}&metric=ro_qps").json()
    cell = size(body, 16, 128)["cells"][0]
    assert sorted(c["printed"] for c in cell["candidates"]) == ["211268", "221153", "235592"]
    narrowed = next(c["sel"] for c in cell["candidates"] if c["printed"] == "235592")
    assert "hot_rows=100000000" in narrowed
    one = client.get(f"{API}/?sel={quote(narrowed, safe='')}&sel={PG13_DEDICATED}&metric=ro_qps").json()
    assert size(one, 16, 128)["cells"][0]["printed"] == "235592"
    bad = client.get(f"{API}/?sel={quote('engine=postgresql&hot_rows=many', safe='')}&sel={PG13_DEDICATED}")
    assert bad.status_code == 400 and "sel" in bad.json()["errors"]
