"""Issue 36.9: the catalogue's pages are sent gzipped to a browser that accepts it, over HTTP, and decode to
the very page sent uncompressed; pages for a reader with a session (and the login form) are not compressed
(BREACH: whitepaper.pages.PageGZipMiddleware says why)."""

import gzip
import urllib.error
import urllib.request

import pytest

pytestmark = pytest.mark.django_db
BROWSER = "gzip, deflate, br, zstd"  # what Chromium sends
PAGES = ["/documents/huawei-2023-08-03-rds/", "/explore/?engine=mysql&version=5.7", "/"]


def get(url, **headers):
    request = urllib.request.Request(url, headers={k.replace("_", "-"): v for k, v in headers.items()})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


@pytest.mark.parametrize("path", PAGES)
def test_it_sends_a_catalogue_page_gzipped_that_decodes_to_the_same_page(catalogue_server, path):
    status, plain_headers, plain = get(catalogue_server + path)
    assert status == 200 and plain_headers["Content-Encoding"] is None and plain.startswith(b"<!doctype html>")
    status, headers, body = get(catalogue_server + path, Accept_Encoding=BROWSER)
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in headers["Vary"] and headers["Content-Type"].startswith("text/html")
    assert gzip.decompress(body) == plain
    assert int(headers["Content-Length"]) == len(body) < len(plain) / 2
    # Again: the same bytes (kept gzipped by the process), and the browser's revalidation is a 304.
    assert get(catalogue_server + path, Accept_Encoding=BROWSER)[2] == body
    assert get(catalogue_server + path, Accept_Encoding=BROWSER, If_None_Match=headers["ETag"])[0] == 304
    # A client that asks for no gzip still gets the page as it was.
    assert get(catalogue_server + path, Accept_Encoding="identity")[2] == plain


def test_it_does_not_compress_pages_for_a_reader_with_a_session_nor_the_login_form(catalogue_server):
    status, headers, body = get(catalogue_server + PAGES[0], Accept_Encoding=BROWSER, Cookie="sessionid=not-a-session")
    assert status == 200 and headers["Content-Encoding"] is None and body.startswith(b"<!doctype html>")
    status, headers, body = get(catalogue_server + "/accounts/login/?next=/runs/", Accept_Encoding=BROWSER)
    assert status == 200 and headers["Content-Encoding"] is None and b"csrfmiddlewaretoken" in body


@pytest.mark.parametrize("path", PAGES)
def test_an_anonymous_page_renders_the_same_bytes_each_time_and_sets_no_cookie(catalogue_server, path):
    """A page kept in the caches is served to every reader: it must not carry one reader's CSRF token (it was
    masked afresh per render, so a plain and a gzipped copy rendered apart differed, and a cache miss between
    them made the page above fail), nor set a cookie."""
    from django.core.cache import cache

    from whitepaper.pages import local_pages

    renders = []
    for _ in range(2):
        cache.clear()
        local_pages.clear()
        status, headers, body = get(catalogue_server + path)
        assert status == 200 and headers["Set-Cookie"] is None
        renders.append(body)
    assert renders[0] == renders[1] and b"X-CSRFToken" not in renders[0] and b"csrfmiddlewaretoken" not in renders[0]


def head(url, **headers):
    request = urllib.request.Request(url, method="HEAD", headers={k.replace("_", "-"): v for k, v in headers.items()})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, answer.headers, answer.read()


@pytest.mark.parametrize("path", PAGES + ["/api/v1/results/?engine=mysql&version=5.7"])
@pytest.mark.parametrize("first", ["GET", "HEAD"])
def test_a_head_answer_has_the_get_answers_encoding_headers(catalogue_server, path, first):
    """Issue 49.11: HEAD says what GET would send (Content-Encoding, Vary: Accept-Encoding, its length), whether
    the page was in the process's memory before (GET first) or not (HEAD first)."""
    from django.core.cache import cache

    from whitepaper.pages import local_pages

    cache.clear()
    local_pages.clear()
    answers = {}
    for method in [first, ({"GET", "HEAD"} - {first}).pop()]:
        if method == "GET":
            answers[method] = get(catalogue_server + path, Accept_Encoding=BROWSER)
        else:
            answers[method] = head(catalogue_server + path, Accept_Encoding=BROWSER)
    (status, got, body), (head_status, headed, head_body) = answers["GET"], answers["HEAD"]
    assert status == head_status == 200 and head_body == b""
    assert got["Content-Encoding"] == headed["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in headed["Vary"] and headed["Vary"] == got["Vary"]
    if path.startswith("/api/"):  # the API's gzip is padded afresh each time (Heal the Breach): lengths differ
        return
    assert headed["Content-Length"] == got["Content-Length"] == str(len(body))
