"""Issue 39.2 in headless Chromium: the explorer's Next and Previous links carry a cursor (after= / before=), and
Back, Forward, a reload and the shared URL show the same rows as the page the reader left."""

import os
import re

import pytest

from .browser_support import rows_on_screen

pytestmark = pytest.mark.django_db


def test_next_previous_back_forward_and_a_shared_link_keep_their_rows(server, page, browser):
    page.goto(f"{server}/explore/?latest=false&lang=en")
    first = rows_on_screen(page)
    page.click("a[rel=next]")
    page.wait_for_url(re.compile(r"page=2&after="))
    second = rows_on_screen(page)
    page.click("a[rel=next]")
    page.wait_for_url(re.compile(r"page=3&after="))
    third, third_url = rows_on_screen(page), page.url
    assert len(first) == len(second) == 100 and not set(first) & set(second) and not set(second) & set(third)
    assert page.inner_text(".result-count").startswith("Results 201–")
    page.go_back()
    page.wait_for_url(re.compile(r"page=2&after="))
    assert rows_on_screen(page) == second
    page.go_forward()
    page.wait_for_url(re.compile(r"page=3&after="))
    assert rows_on_screen(page) == third
    page.click("a[rel=prev]")
    page.wait_for_url(re.compile(r"page=2&before="))
    assert rows_on_screen(page) == second
    page.click("a[rel=prev]")
    page.wait_for_url(lambda url: "page=" not in url and "before=" not in url)
    assert rows_on_screen(page) == first
    other = browser.new_context(viewport={"width": 390, "height": 844})  # a shared link, in another browser, on a phone
    phone = other.new_page()
    phone.goto(third_url)
    assert rows_on_screen(phone) == third
    if os.environ.get("PERFDASH_SHOT_DIR"):
        page.goto(third_url)
        page.screenshot(path=os.path.join(os.environ["PERFDASH_SHOT_DIR"], "explorer-page3-1280.png"), full_page=False)
        phone.evaluate("() => document.querySelector('.pager').scrollIntoView()")
        phone.screenshot(path=os.path.join(os.environ["PERFDASH_SHOT_DIR"], "explorer-page3-390.png"))
    other.close()
