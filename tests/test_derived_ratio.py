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


def test_engine_page_lines_keep_one_ratio_each_or_one_flavour_per_vcpu_count(client):
    # Series follow the ratio the document prints (issue 36.5). Alibaba prints none: its rows are split by the
    # derived ratio (said "derived") where one line would join two flavours of one vCPU count, else stay one
    # line: dedicated 2/16 ... 16/128 GB (1:8) and 30/220 GB (1:7.3) are one line, not a line and a dot.
    specs = chart_specs(client.get("/engines/mysql/5.7/").content.decode())
    alibaba = [s for spec in specs for s in spec["series"] if "Alibaba" in s["label"]]
    assert any("derived" in s["label"] for s in alibaba), [s["label"] for s in alibaba]
    for series in alibaba:  # (a document's own ratio may group 60 vCPUs / 128 GB under 1:2)
        if "derived" in series["label"]:
            assert len({p["memory_gb"] / p["x"] for p in series["points"]}) == 1, series["label"]
        xs = [p["x"] for p in series["points"]]
        assert len(xs) == len(set(xs)), series["label"]  # never two flavours of one vCPU count on one line
    dedicated = [[(p["x"], p["memory_gb"]) for p in s["points"]] for spec in specs for s in spec["series"]
                 if "Alibaba" in s["label"] and any(p["flavor"] == "rds.mysql.st.d13" for p in s["points"])]
    assert len(dedicated) == 1 and (30, 220) in dedicated[0] and (16, 128) in dedicated[0], dedicated
    points = sum(len(s["points"]) for s in alibaba)
    assert points == len(alibaba_mysql_rows())


def test_sql_server_2018_chart_is_a_line_per_deployment_not_six_dots(client):
    # huawei-2018-12-11-rds.yaml, 2.2: Web single and Standard HA at 4/8, 8/32, 16/128 GB (derived 1:2, 1:4, 1:8).
    specs = chart_specs(client.get("/documents/huawei-2018-12-11-rds/?lang=en").content.decode())
    sqlserver = next(s for s in specs if s["title"].startswith("SQL Server 2014"))
    assert sorted([p["x"] for p in s["points"]] for s in sqlserver["series"]) == [[4, 8, 16], [4, 8, 16]]
    assert not any("derived" in s["label"] for s in sqlserver["series"])
