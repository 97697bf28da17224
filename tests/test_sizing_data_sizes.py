"""Sizing says when its answers were measured on different data sizes, and can be limited to a vendor or a document
(issue 49.4). From the data files: Huawei's 2018 MySQL runs loaded 64 tables x 1,000,000 rows
(huawei-2018-12-11-rds.yaml), the 2023 and 2025 runs 64 tables x 10,000,000 rows."""

import re

import pytest

pytestmark = pytest.mark.django_db
QUESTION = "/sizing/?engine=mysql&version=5.7&metric=tps&target=4000&lang=en"


def sources(html):
    return re.findall(r'data-label="Source"><a href="/documents/([\w-]+)/', html)


def test_it_says_the_answers_mix_data_sizes(client):
    html = client.get(QUESTION).content.decode()
    assert "huawei-2018-12-11-rds" in sources(html) and len(set(sources(html))) > 1
    note = re.search(r'<p class="warning data-sizes" role="note">(.*?)</p>', html, re.S).group(1)
    assert "measured on different data sizes" in note
    assert "64 tables × 1,000,000 rows" in note and "64 tables × 10,000,000 rows" in note


def test_it_can_be_limited_to_a_document_or_a_vendor(client):
    html = client.get(QUESTION + "&document=huawei-2023-08-03-rds").content.decode()
    assert sources(html) and set(sources(html)) == {"huawei-2023-08-03-rds"}
    assert "data-sizes" not in html
    assert '<option value="huawei-2023-08-03-rds" selected>' in html
    alibaba = client.get(QUESTION.replace("4000", "1000") + "&vendor=alibaba").content.decode()
    assert sources(alibaba) and set(sources(alibaba)) == {"alibaba-2019-06-18-rds"}
    assert '<option value="alibaba" selected>' in alibaba
