"""Document order has one home (issue 38.2): the home page, the engine page and the API list the documents in
the same order, newest first and, for the two documents of one day, the later slug first."""

import re

import pytest

pytestmark = pytest.mark.django_db

# From whitepaper/data/*.yaml: dates, then slugs descending within 2025-10-21.
NEWEST_FIRST = ["huawei-2025-10-21-postgresql", "huawei-2025-10-21-mysql", "huawei-2023-08-03-rds",
                "alibaba-2019-06-18-rds", "huawei-2018-12-11-rds"]


def document_links(html):
    slugs = re.findall(r'href="/documents/([a-z0-9-]+)/"', html)
    return list(dict.fromkeys(slugs))


def test_it_lists_documents_newest_first_on_the_home_page(client):
    assert document_links(client.get("/").content.decode()) == NEWEST_FIRST


def test_it_lists_documents_in_the_same_order_in_the_api(client):
    body = client.get("/api/v1/documents/").json()
    assert [d["slug"] for d in body["results"]] == NEWEST_FIRST


def test_it_lists_an_engines_documents_in_the_same_order(client):
    mysql = [slug for slug in NEWEST_FIRST if slug != "huawei-2025-10-21-postgresql"]
    page = client.get("/engines/mysql/").content.decode()
    assert document_links(page) == mysql
