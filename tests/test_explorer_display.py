"""How the explorer shows a row's document: date and short name, the full title on hover."""

import re

import pytest

pytestmark = pytest.mark.django_db


def test_document_titles_are_short_with_the_full_title_on_hover(client):
    html = client.get("/explore/?engine=mysql&version=8.0&lang=en").content.decode()
    cells = set(re.findall(r'<a href="/documents/[^"]+/" title="([^"]+)">([^<]+)</a>', html))
    assert ("Cloud Database RDS for MySQL Performance Whitepaper, Oct. 21, 2025", "2025-10-21 RDS for MySQL") in cells
    zh = client.get("/explore/?engine=mysql&version=5.7&latest=false&lang=zh-hans").content.decode()
    cells = set(re.findall(r'<a href="/documents/[^"]+/" title="([^"]+)">([^<]+)</a>', zh))
    assert {("云数据库 MySQL 版 性能白皮书，2019年6月18日", "2019-06-18 MySQL 版"),
            ("关系型数据库 性能白皮书，2018年12月11日", "2018-12-11 关系型数据库"),
            ("云数据库 RDS 性能白皮书，2023年8月3日", "2023-08-03 RDS")} <= cells


def test_an_edited_document_shows_its_new_title_and_date_at_once(client, settings):
    """The link is made once per process for what it shows (views.document_link): an edit is a new link."""
    from whitepaper.models import Document

    settings.CATALOGUE_STAMP_TTL = 0  # the test's transaction never runs the on-commit hook that re-reads the stamp

    link = re.compile(r'<a href="(/documents/[^"]+/)" title="([^"]+)">([^<]+)</a>')
    url = "/explore/?engine=mysql&version=8.0&lang=en"
    assert ("Cloud Database RDS for MySQL Performance Whitepaper, Oct. 21, 2025", "2025-10-21 RDS for MySQL") in {
        m[1:] for m in link.findall(client.get(url).content.decode())}
    document = Document.objects.get(title_en="Cloud Database RDS for MySQL Performance Whitepaper")
    document.title_en, document.published = "RDS for MySQL, revised", "2025-10-22"
    document.save()
    cells = {m for m in link.findall(client.get(url).content.decode())}
    assert (f"/documents/{document.slug}/", "RDS for MySQL, revised, Oct. 22, 2025",
            "2025-10-22 RDS for MySQL, revised") in cells
    assert not any("Oct. 21, 2025" in title for _href, title, _text in cells)
    document.slug = "mysql-revised"
    document.save()
    assert "/documents/mysql-revised/" in {m[0] for m in link.findall(client.get(url).content.decode())}
    zh = {m[1:] for m in link.findall(client.get(url.replace("lang=en", "lang=zh-hans")).content.decode())}
    assert any(text.startswith("2025-10-22 ") and title.endswith("2025年10月22日") for title, text in zh)


def _queries(client, url):
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from whitepaper.pages import local_pages

    cache.clear()
    local_pages.clear()
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
    assert response.status_code == 200
    return len(ctx), body.decode()


def test_the_explorer_pages_its_rows_and_reads_the_same_queries_on_any_page(client, settings):
    from whitepaper.models import PublishedResult

    settings.CATALOGUE_STAMP_TTL = 0
    assert PublishedResult.objects.visible().count() > 300  # several pages
    ids, page, counts = [], 1, []
    while True:
        n, html = _queries(client, f"/explore/?latest=false&page={page}")
        counts.append(n)
        rows = [int(x) for x in re.findall(r'<tr data-result="(\d+)">', html)]
        assert f"Results {len(ids) + 1}–{len(ids) + len(rows)}" in html
        ids += rows
        if 'rel="next"' not in html:
            break
        assert len(rows) == 100
        page += 1
    assert sorted(ids) == sorted(PublishedResult.objects.visible().values_list("pk", flat=True))
    few, html = _queries(client, "/explore/?min_vcpus=60")
    assert "published results" in html and 'rel="next"' not in html
    assert len(set(counts + [few])) == 1, (counts, few)


def test_the_csv_reads_the_same_queries_for_every_row_or_a_few(client, settings):
    settings.CATALOGUE_STAMP_TTL = 0
    everything, body = _queries(client, "/explore/results.csv?latest=false")
    few, small = _queries(client, "/explore/results.csv?min_vcpus=60")
    assert everything == few and len(body.splitlines()) > 300 > len(small.splitlines())
