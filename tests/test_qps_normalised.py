"""QPS on one definition where documents count differently (Huawei 20 statements per sysbench
transaction, Alibaba 18): offered beside QPS as published, labelled, never mixed silently. Expected
values by hand from the printed numbers: QPS x 18 / the methodology's statements per transaction."""

import json
import re
from decimal import Decimal

import pytest

from whitepaper.models import PublishedResult

pytestmark = pytest.mark.django_db


def normalised(printed, statements):
    return (Decimal(printed) * 18 / statements).quantize(Decimal("0.01"))


def rows():
    huawei = PublishedResult.objects.filter(table__document__slug="huawei-2025-10-21-mysql", engine_version__version="5.7",
                                            qps__isnull=False).order_by("pk").first()
    alibaba = PublishedResult.objects.filter(table__document__slug="alibaba-2019-06-18-rds", engine_version__version="5.7",
                                             qps__isnull=False).order_by("pk").first()
    return huawei, alibaba


def test_compare_offers_qps_normalised_beside_qps_as_published(client):
    huawei, alibaba = rows()
    html = client.get(f"/compare/?sel={huawei.pk}&sel={alibaba.pk}&metric=qps&lang=en").content.decode()
    assert "QPS is defined differently here" in html and "QPS as published" in html
    assert "metric=qps_normalised" in html  # one click away
    html = client.get(f"/compare/?sel={huawei.pk}&sel={alibaba.pk}&metric=qps_normalised&lang=en").content.decode()
    assert "normalised to 18 statements per transaction (QPS × 18 ÷ the document's count)" in html
    # Huawei prints QPS = 20 x TPS: normalised it is x 18/20; Alibaba's (18) stays as printed.
    assert str(normalised(huawei.printed["qps"], 20)) in html
    assert str(normalised(alibaba.printed["qps"], 18)) in html
    chart = json.loads(re.search(r'<script id="chart-compare-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert chart["initial_metric"] == "qps_normalised"
    values = sorted(p["qps_normalised"] for s in chart["series"] for p in s["points"])
    assert values == sorted(float(normalised(r.printed["qps"], n)) for r, n in ((huawei, 20), (alibaba, 18)))


def test_engine_page_charts_label_both_qps_where_vendors_meet(client):
    html = client.get("/engines/mysql/5.7/?lang=en").content.decode()
    specs = [json.loads(m) for m in re.findall(r'<script id="chart-[^"]*-data" type="application/json">(.*?)</script>', html, re.S)]
    mixed = [s for s in specs if {"qps", "qps_normalised"} <= {m["name"] for m in s["metrics"]}]
    assert mixed  # Huawei and Alibaba meet in the dedicated and general-purpose charts
    for spec in mixed:
        labels = {m["name"]: m["label"] for m in spec["metrics"]}
        assert labels["qps"] == "QPS as published"
        assert labels["qps_normalised"] == "QPS, normalised to 18 statements per transaction"
    huawei_only = [s for s in specs if "Kunpeng" in s["title"]]  # "MySQL 5.7 · Kunpeng general-enhanced (ARM)"
    assert huawei_only and all(m["label"] != "QPS as published" for s in huawei_only for m in s["metrics"])


def test_explorer_says_when_its_rows_count_qps_differently(client):
    html = client.get("/explore/?engine=mysql&version=5.7&lang=en").content.decode()
    assert "These rows count QPS differently (18 / 20 statements per transaction" in html
    link = re.search(r'<a class="qps-normalised-link" href="\?([^"]+)"', html).group(1).replace("&amp;", "&")
    huawei, alibaba = rows()
    html = client.get(f"/explore/?{link}&latest=false&lang=en").content.decode()
    assert "QPS, normalised to 18 statements per transaction" in html
    for r, n in ((huawei, 20), (alibaba, 18)):
        row = re.search(rf'<tr data-result="{r.pk}">(.*?)</tr>', html, re.S).group(1)
        assert f'<td data-col="qps_normalised">{normalised(r.printed["qps"], n)}</td>' in row
    assert "These rows count QPS" not in client.get("/explore/?vendor=huawei&engine=mysql").content.decode()
