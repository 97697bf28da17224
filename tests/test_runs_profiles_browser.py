"""The profiles page and form (issue 50.9) at 1280 and 390 px in both languages, in Chromium, as an operator: the
list's name and tool columns in view, no page wider than the window, a published methodology's profile read-only with
its "copy" link. PERFDASH_SCREENSHOTS=1 writes docs/screenshots/runs-profiles-<width>[.zh-hans].png and
runs-profile-form-*."""

import os

import pytest

from runs.models import BenchmarkProfile

from testbed.runs_support import make_user

from .test_runs_pages_browser import SCREENSHOTS, login, measure
from testbed.runs_support import seed_profiles_for_tests

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_the_profiles_page_and_form_fit_at_1280_and_390_px(live_server, browser, lang):
    seed_profiles_for_tests()
    user = make_user("profiles-browser", operator=True)
    published = BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql")
    shots = os.environ.get("PERFDASH_SCREENSHOTS") == "1"
    suffix = "" if lang == "en" else ".zh-hans"
    for width in (1280, 390):
        tag = "" if width == 1280 else f".{width}"
        page = login(browser, live_server, user, width).new_page()
        page.goto(f"{live_server.url}/runs/profiles/?lang={lang}")
        assert page.locator("#profiles tbody tr").count() == BenchmarkProfile.objects.count()
        measure(page, width, f"profiles {width} {lang}")
        if shots:
            page.screenshot(path=str(SCREENSHOTS / f"runs-profiles{tag}{suffix}.png"), full_page=True)
        page.goto(f"{live_server.url}/runs/profiles/{published.pk}/?lang={lang}")
        assert page.locator("#save-profile").count() == 0 and page.locator("#copy-profile").is_visible()
        assert page.locator("#id_threads").is_disabled()
        measure(page, width, f"profile form {width} {lang}")
        if shots:
            page.screenshot(path=str(SCREENSHOTS / f"runs-profile-form{tag}{suffix}.png"), full_page=True)
        page.click("#copy-profile")
        assert page.locator("#id_slug").input_value() == "sysbench-oltp-rw-mysql-copy"
        assert page.locator("#id_thread_sweep").input_value() == "8, 16, 32, 64, 128"
        page.fill("#id_threads", "0")
        page.click("#save-profile")
        error = page.locator("#profile-form .errorlist").inner_text()  # the parser's words, in the page's language
        assert "threads" in error and "1024" in error, error
        page.context.close()
