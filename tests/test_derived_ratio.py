"""Alibaba's documents group flavours by no memory ratio: the explorer and the engine pages derive it
from vCPUs and memory (labelled "derived"), so those rows match a CPU:memory filter and each chart
line keeps one ratio instead of zigzagging. Expected rows come from the data file."""

import re
from pathlib import Path

import pytest
import yaml

from .test_pages import chart_specs

pytestmark = pytest.mark.django_db

ALIBABA = Path(__file__).resolve().parent.parent / "whitepaper" / "data" / "alibaba-2019-06-18-rds.yaml"


def alibaba_mysql_rows():
    doc = yaml.load(ALIBABA.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    return [dict(zip(t["columns"], row)) for t in doc["tables"] if t["engine"] == "mysql" for row in t["rows"]]


def test_the_explorer_matches_alibaba_rows_by_their_derived_ratio_and_says_so(client):
    expected = sorted(r["flavor"] for r in alibaba_mysql_rows() if int(r["memory_gb"]) == 4 * int(r["vcpus"]))
    assert expected  # rds.mysql.s2.xlarge (2 vCPUs, 8 GB) ...
    html = client.get("/explore/?vendor=alibaba&engine=mysql&memory_ratio=1:4").content.decode()
    rows = re.findall(r'<tr data-result="\d+">(.*?)</tr>', html, re.S)
    assert sorted(re.search(r"(rds\.mysql\.[\w.]+|mysql\.[\w.]+)", r).group(1) for r in rows) == expected
    assert all('<span class="derived"' in r and "1:4 (derived)" in r for r in rows)
    # Chinese pages say it too.
    zh = client.get("/explore/?vendor=alibaba&engine=mysql&memory_ratio=1:4&lang=zh-hans").content.decode()
    assert zh.count(">1:4（推算）</span>") == len(expected)  # in the ratio cells (row names repeat it)
    # The API keeps the documents' own ratios.
    api = client.get("/api/v1/results/", {"vendor": "alibaba", "memory_ratio": "1:4"}).json()
    assert api["count"] == 0


def test_engine_page_lines_keep_one_ratio_each(client):
    specs = chart_specs(client.get("/engines/mysql/5.7/").content.decode())
    alibaba = [s for spec in specs for s in spec["series"] if "derived" in s["label"]]
    assert alibaba, [s["label"] for spec in specs for s in spec["series"]]
    for series in alibaba:  # (a document's own ratio may group 60 vCPUs / 128 GB under 1:2)
        ratios = {p["memory_gb"] / p["x"] for p in series["points"]}
        assert len(ratios) == 1, (series["label"], ratios)
    points = sum(len(s["points"]) for s in alibaba)
    assert points == len(alibaba_mysql_rows())
