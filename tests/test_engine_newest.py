"""The engine version pages draw each flavour's newest published figure by default and say where an older
edition printed another number; every edition is one click away (latest=false) (issue 21.1).
Expected values: Huawei's PostgreSQL 12 dedicated 1:4, 64 vCPU / 256 GB: 10929.30 TPS in the 2023-08-03 RDS
paper (whitepaper/data/huawei-2023-08-03-rds.yaml), 8839.4 in the 2025-10-21 PostgreSQL paper (table 2-3):
(8839.4 - 10929.30) / 10929.30 = -19.1 %."""

import json
import re

import pytest

pytestmark = pytest.mark.django_db


def tps_points(html):
    specs = [json.loads(m) for m in re.findall(r'<script id="chart-family-\d+-data" type="application/json">(.*?)</script>', html, re.S)]
    return [p["tps"] for spec in specs for s in spec["series"] for p in s["points"]]


def test_engine_page_draws_the_newest_figure_and_names_the_revised_one(client):
    html = client.get("/engines/postgresql/12/?lang=en").content.decode()
    points = tps_points(html)
    assert 8839.4 in points and 10929.3 not in points
    assert "revised from 10929.30 in 2023, -19.1 %" in html
    link = re.search(r'<a href="([^"]+)">Show every edition', html).group(1).replace("&amp;", "&")
    assert "latest=false" in link
    every = client.get(link).content.decode()
    assert 10929.3 in tps_points(every) and 8839.4 in tps_points(every)
    assert "revised from" not in every


def test_engine_page_reads_a_fixed_number_of_queries(client, django_assert_max_num_queries, settings):
    from whitepaper.pages import local_pages

    settings.CATALOGUE_STAMP_TTL = 0
    local_pages.clear()
    # the catalogue stamp, the version, the results, the older editions of the drawn ones (one per chart metric)
    with django_assert_max_num_queries(4):
        assert client.get("/engines/postgresql/12/").status_code == 200
