"""The staff page that drafts a whitepaper from its text (issue 24.4): over HTTP, and in Chromium at 1280
and 390 px in English and Chinese. The made-up edition is the one of tests/test_drafting.py."""

import re

import pytest
from django.test import Client

from tests.seeds import require_seeds_dir
from testbed.drafting import hand_made, made_up_edition
from whitepaper.models import Document, PublishedResult


URL = "/drafts/"
NO_OVERFLOW = "() => document.documentElement.scrollWidth <= window.innerWidth"


def made_up_text():
    data = hand_made("huawei-2025-10-21-mysql")
    return made_up_edition((require_seeds_dir() / data["document"]["source_file"]).read_text(encoding="utf-8"))


def upload(client, text, name="huawei-mysql-2026.txt"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    content = text if isinstance(text, bytes) else text.encode("utf-8")
    return client.post(URL, {"action": "draft", "vendor": "", "text": SimpleUploadedFile(name, content)})


@pytest.mark.django_db
def test_only_staff_draft(anonymous, customer, operator):
    assert anonymous.get(URL).status_code == 302
    assert customer.get(URL).status_code == 403
    assert operator.get(URL).status_code == 403


@pytest.mark.django_db
def test_staff_find_the_page_in_the_header_and_nobody_else_does(anonymous, customer, operator, staff):
    link = 'href="/drafts/"'
    assert link in staff.get("/").content.decode()
    for visitor in (anonymous, customer, operator):
        assert link not in visitor.get("/").content.decode()


@pytest.mark.django_db
def test_upload_review_then_import_after_confirmation(staff, django_assert_max_num_queries):
    documents, rows = Document.objects.count(), PublishedResult.objects.count()
    with django_assert_max_num_queries(20):  # no query per table or row
        response = upload(staff, made_up_text())
    html = response.content.decode()
    assert response.status_code == 200
    assert "huawei-2026-03-02-mysql: new document" in html  # the dry run
    assert "rows: 107 created, 0 changed, 0 deleted, 0 unchanged" in html
    # the edition diff against the previous edition of the family (2025-10-21 MySQL), by the edits written
    assert 'href="/documents/huawei-2025-10-21-mysql/"' in html
    assert "104 same, 2 changed, 1 new, 1 gone" in html
    assert "TPS <del>197.19</del> → <ins>205.31</ins>" in html
    assert "TPS <del>1062</del> → <ins>1111</ins>" in html  # as each edition prints it
    assert 'download="huawei-2026-03-02-mysql.yaml"' in html
    assert '<span id="mark-count">1</span>' in html
    assert (Document.objects.count(), PublishedResult.objects.count()) == (documents, rows)  # nothing written yet

    content = response.context["content"]
    response = staff.post(URL, {"action": "import", "draft": content})  # not confirmed
    assert "Tick “I have reviewed the draft” to import it." in response.content.decode()
    assert (Document.objects.count(), PublishedResult.objects.count()) == (documents, rows)

    response = staff.post(URL, {"action": "import", "draft": content, "confirm": "yes"})
    assert "huawei-2026-03-02-mysql: " in response.content.decode()
    assert PublishedResult.objects.filter(table__document__slug="huawei-2026-03-02-mysql").count() == 107


@pytest.mark.django_db
def test_bad_text_is_a_message_naming_the_line(staff):
    before = PublishedResult.objects.count()
    response = upload(staff, "华为\n文档版本 01\n发布日期 2024-01-01\n\nNo tables at all.\n", "notes.txt")
    assert response.status_code == 200
    assert "notes.txt: line 1: not a whitepaper: no results table" in response.content.decode()
    response = upload(staff, "华为 文档版本 01".encode("utf-16"), "utf16.txt")
    assert response.status_code == 200
    assert "The text file is not UTF-8." in response.content.decode()
    response = upload(staff, made_up_text().replace("1\t2\t800\t205.31\t4106.22\t", "1\t2\t800\t205.31\t"), "short.txt")
    assert "short.txt: line 147: 5 cells but the header (line 146) has 6 columns: a cell is missing" in \
        response.content.decode()
    assert PublishedResult.objects.count() == before


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("lang,heading,diff", [("en", "Draft a whitepaper from its text", "2 changed, 1 new, 1 gone"),
                                               ("zh-hans", "根据文本起草白皮书", "2 行有变化，1 行新增，1 行删除")])
def test_the_page_at_both_widths_in_both_languages(live_server, browser, tmp_path, width, lang,  # noqa: F811
                                                   heading, diff):
    from django.contrib.auth.models import User

    staff = User.objects.create_user("draft-staff", password="x-Draft-pass-1", is_staff=True)
    client = Client()
    client.force_login(staff)
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    source = tmp_path / "huawei-mysql-2026.txt"
    source.write_text(made_up_text(), encoding="utf-8")
    try:
        page.goto(f"{live_server.url}{URL}?lang={lang}")
        assert page.inner_text("h1") == heading
        page.set_input_files("#id_text", str(source))
        page.click("#draft-upload button")
        page.wait_for_selector("#draft-plan")
        assert diff in page.inner_text("#draft-previous")
        assert page.evaluate(NO_OVERFLOW)
        assert page.is_visible("#draft-download") and page.is_visible("#confirm-import")
        page.check("#id_confirm")
        page.click("#confirm-import")
        page.wait_for_selector("#draft-imported")
        assert re.search(r"huawei-2026-03-02-mysql: 1\d\d created", page.inner_text("#draft-imported"))
        assert page.evaluate(NO_OVERFLOW)
    finally:
        context.close()
