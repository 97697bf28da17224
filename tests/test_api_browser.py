"""The API's docs page and CORS in real headless Chromium: Swagger UI (from the pinned
drf-spectacular-sidecar package, no CDN) renders every catalogue operation from /api/v1/schema/, and
a page on another origin can read the API with fetch().

Read-only, so the live server is started for the module without `transactional_db` (whose flush
would empty the session's catalogue), as in test_browser_pages.py."""

from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.django_db


def test_docs_page_renders_the_schema_with_swagger_ui(server, page):
    failed = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.goto(f"{server}/api/v1/docs/")
    page.wait_for_selector(".opblock-summary-path", timeout=20000)
    paths = set(page.locator(".opblock-summary-path").all_inner_texts())
    assert {"/api/v1/results/", "/api/v1/spec/", "/api/v1/vendors/{slug}/"} <= {p.replace("\u200b", "") for p in paths}
    assert not failed, failed
    hosts = {urlsplit(url).hostname for url in page.evaluate("() => performance.getEntries().map(e => e.name)")
             if url.startswith("http")}
    assert hosts == {"localhost"}, hosts  # every asset from this server


def test_a_page_on_another_origin_can_read_the_api(server, page):
    other_origin = server.replace("localhost", "127.0.0.1")  # same server, different origin
    page.goto(f"{other_origin}/")
    body = page.evaluate("""async (url) => {
        const response = await fetch(url);
        return {status: response.status, json: await response.json()};
    }""", f"{server}/api/v1/results/?engine=mysql&page_size=2")
    assert body["status"] == 200 and len(body["json"]["results"]) == 2
    assert {r["engine"] for r in body["json"]["results"]} == {"mysql"}
