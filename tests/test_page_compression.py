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
