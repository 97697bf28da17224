"""Alibaba's "PostgreSQL 10" and "PPAS 10" are examples, not the version tested (issue 36.8): the 2019 document
(001_902b70d2a9ac6bc3.txt) names them only when changing parameters ("以 PPAS 10 为例", "PostgreSQL10.0" as the
example); the data file marks those tables `version_example`, and the home page and the explorer's version menus
say "example version". Versions a document names as tested (MySQL 5.7, PostgreSQL 12) carry no such mark."""

import re

import pytest

from tests.seeds import require_seeds_dir

pytestmark = pytest.mark.django_db


def test_the_document_names_10_only_as_an_example():
    text = (require_seeds_dir() / "001_902b70d2a9ac6bc3.txt").read_text(encoding="utf-8")
    assert "PPAS 10" in text and "PostgreSQL10.0" in text


def test_the_home_page_and_the_explorer_say_example_version(client):
    home = client.get("/?lang=en").content.decode()
    marked = re.findall(r'<a href="/engines/(\w+)/([^/]+)/">[^<]+</a> <span class="example-version"', home)
    assert sorted(marked) == [("postgresql", "10"), ("ppas", "10")]
    zh = client.get("/?lang=zh-hans").content.decode()
    assert zh.count('class="example-version"') == 2
    explorer = client.get("/explore/?engine=postgresql&lang=en").content.decode()
    assert '<option value="10">10 (example version)</option>' in explorer
    assert '<option value="12">12</option>' in explorer
