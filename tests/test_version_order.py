"""Versions sort as versions, not as text, in every menu and page: 9.6 < 10 < 12, 5.7 < 8.0, 2008 R2 < 2014
(issue 21.5). The versions are those of the data files (whitepaper/data/*.yaml: PostgreSQL 9.6 in Huawei's 2023
paper, 10 in Alibaba's 2019 paper, 12-15 in Huawei's 2023 and 2025 papers)."""

import re

import pytest

from whitepaper.models import Engine, EngineVersion

pytestmark = pytest.mark.django_db
POSTGRESQL = ["9.6", "10", "12", "13", "14", "15"]


def row_versions(html):
    rows = re.findall(r'<tr data-result="\d+">(.*?)</tr>', html, re.S)
    return [re.search(r">PostgreSQL ([\d.]+)<", row).group(1) for row in rows]


def distinct(values):
    return [v for i, v in enumerate(values) if v not in values[:i]]


@pytest.mark.parametrize("sort, expected", [("engine", POSTGRESQL), ("-engine", POSTGRESQL[::-1])])
def test_the_explorer_sorts_by_version_as_versions(client, sort, expected):
    html = client.get(f"/explore/?engine=postgresql&sort={sort}&cols=engine&cols=flavor&cols=tps&latest=false").content.decode()
    shown = distinct(row_versions(html))
    assert shown == [v for v in expected if v in shown] and shown[0] == expected[0]


def test_a_new_version_gets_its_place(db):
    engine = Engine.objects.get(slug="postgresql")
    EngineVersion.objects.create(engine=engine, version="9.5")
    EngineVersion.objects.create(engine=engine, version="11")
    assert [v.version for v in EngineVersion.objects.filter(engine=engine)] == ["9.5", "9.6", "10", "11", "12", "13", "14", "15"]


@pytest.mark.parametrize("url", ["/", "/engines/postgresql/", "/explore/?engine=postgresql", "/compare/"])
def test_menus_and_lists_name_versions_in_version_order(client, url):
    html = client.get(url).content.decode()
    positions = [html.find(f'value="{v}"') if "explore" in url or "compare" in url else html.find(f"PostgreSQL {v}<")
                 for v in POSTGRESQL]
    assert -1 not in positions and positions == sorted(positions), (url, positions)
