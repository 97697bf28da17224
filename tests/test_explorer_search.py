"""Finding a row by name (issue 49.9): the explorer's text search `q=` over spec codes, family names in both
languages, engine and vendor; `cols=a,b` read as two columns and an unknown column said, never ignored.

Expected rows from the data files: alibaba-2019-06-18-rds.yaml prints rds.mysql.c1.xlarge once (MySQL 5.7,
8 vCPU / 32 GB, TPS 1626, QPS 29285); the Kunpeng general-enhanced family (鲲鹏通用增强型, _vocabulary.yaml) is
Huawei's; its rows are counted here from the data files' tables of family kunpeng-general-enhanced."""

import re
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.django_db
DATA = Path(__file__).resolve().parent.parent / "whitepaper" / "data"


def result_ids(html):
    return re.findall(r'<tr data-result="(\d+)">', html)


def kunpeng_rows():
    """Every Kunpeng row of every document (latest=false: each edition's row)."""
    n = 0
    for path in DATA.glob("*.yaml"):
        if path.name.startswith("_"):
            continue
        for table in yaml.safe_load(path.read_text()).get("tables", []):
            if table.get("family") == "kunpeng-general-enhanced":
                n += len(table["rows"])
    return n


def test_a_spec_code_finds_its_row(client):
    html = client.get("/explore/?q=rds.mysql.c1.xlarge&cols=flavor,vcpus,memory_gb,tps,qps&lang=en").content.decode()
    assert len(result_ids(html)) == 1
    row = re.search(r'<tr data-result="\d+">(.*?)</tr>', html, re.S).group(1)
    assert "rds.<wbr>mysql.<wbr>c1.<wbr>xlarge" in row and ">1626<" in row and ">29285<" in row
    assert 'name="q" value="rds.mysql.c1.xlarge"' in html


@pytest.mark.parametrize("word", ["Kunpeng", "kunpeng", "鲲鹏"])
def test_a_family_name_in_either_language_finds_its_rows(client, word):
    expected = kunpeng_rows()
    assert expected > 0
    html = client.get("/explore/", {"q": word, "latest": "false", "lang": "en"}).content.decode()
    m = re.search(r"Results 1–\d+ of (\d+)|(\d+) published results?", html)
    assert int(m.group(1) or m.group(2)) == expected
    # the CSV holds the same rows
    csv = b"".join(client.get("/explore/results.csv", {"q": word, "latest": "false"}).streaming_content).decode()
    assert len(csv.strip().splitlines()) - 1 == expected


def test_words_narrow_and_nothing_found_is_said(client):
    both = client.get("/explore/", {"q": "Kunpeng 1:8", "latest": "false", "lang": "en"}).content.decode()
    assert "0 published results" in both  # the ratio is no name: no row has "1:8" in a name
    few = client.get("/explore/", {"q": "mysql c1", "lang": "en"}).content.decode()
    assert {"rds.<wbr>mysql.<wbr>c1.<wbr>large", "rds.<wbr>mysql.<wbr>c1.<wbr>xlarge"} <= set(re.findall(r"rds\.<wbr>mysql\.<wbr>c1\.<wbr>\w+", few))


def test_cols_comma_separated_are_columns_and_an_unknown_one_is_said(client):
    html = client.get("/explore/?engine=mysql&version=5.7&cols=vcpus,tps&lang=en").content.decode()
    assert re.findall(r'<th scope="col" data-col="(\w+)"', html) == ["vcpus", "tps"]
    bad = client.get("/explore/?engine=mysql&version=5.7&cols=vcpus,speed&lang=en").content.decode()
    assert "Not a column: speed." in bad
    assert re.findall(r'<th scope="col" data-col="(\w+)"', bad) == ["vcpus"]
