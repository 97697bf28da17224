"""The stored "newest edition" flag (`PublishedResult.is_newest`, the explorer's default `latest=true`)
is right after importing the bundled documents, after a document's date changes through a re-import,
and after publishing and retracting internal runs. The expectation is computed here from the data
files (whitepaper/data/*.yaml: for each variant, the document with the latest date, then slug),
not by the code under test."""

import io
import re
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from runs.models import BenchmarkProfile, Run, RunState, Target
from whitepaper.models import PublishedResult
from testbed.runs_support import seed_profiles_for_tests

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parent.parent / "whitepaper" / "data"
ROW_LEVEL = ["engine", "version", "family", "memory_ratio", "deployment", "edition"]


def file_rows(path, published=None):
    """[(document slug, (published, slug), variant)] of one data file; `published` overrides its date."""
    doc = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    meta = doc["document"]
    order = (published or meta["published"], meta["slug"])
    rows = []
    for table in doc["tables"]:
        for row in table["rows"]:
            values = dict(zip(table["columns"], row))
            cell = [values.get(k, table.get(k, "")) for k in ROW_LEVEL]
            variant = (meta["vendor"], *cell, int(values["vcpus"]), int(values["memory_gb"]), values.get("flavor", ""))
            rows.append((meta["slug"], order, variant))
    return rows


def expected_newest(dates=None):
    """{(document slug, variant): newest?} over every bundled data file."""
    dates = dates or {}
    rows = [r for path in sorted(DATA.glob("[!_]*.yaml")) for r in file_rows(path, dates.get(path.stem))]
    latest = {}
    for _slug, order, variant in rows:
        latest[variant] = max(latest.get(variant, order), order)
    return {(slug, variant): order == latest[variant] for slug, order, variant in rows}


def stored_newest():
    rows = PublishedResult.objects.exclude(table__document__vendor__slug="internal").select_related(
        "table__document__vendor", "engine_version__engine", "flavor__family")
    return {(r.table.document.slug, (r.table.document.vendor.slug, r.engine_version.engine.slug, r.engine_version.version,
                                      r.flavor.family.slug if r.flavor.family else "", r.flavor.memory_ratio, r.deployment,
                                      r.edition, r.flavor.vcpus, r.flavor.memory_gb, r.flavor.spec_code)): r.is_newest
            for r in rows}


def test_the_flag_marks_each_variants_newest_document_after_import():
    expected = expected_newest()
    assert stored_newest() == expected
    # the bundled editions do repeat variants: the flag has work to do
    assert 0 < sum(1 for v in expected.values() if not v) < len(expected)


def test_a_re_import_that_changes_a_documents_date_moves_the_flag(tmp_path):
    older = DATA / "huawei-2018-12-11-rds.yaml"
    copy = tmp_path / older.name
    copy.write_text(older.read_text(encoding="utf-8").replace('published: "2018-12-11"', 'published: "2030-01-01"'),
                    encoding="utf-8")
    before = expected_newest()
    call_command("import_whitepapers", str(copy), verbosity=0, stdout=io.StringIO())
    after = expected_newest({"huawei-2018-12-11-rds": "2030-01-01"})
    assert after != before  # the 2018 rows now outrank 2023's for the variants both print
    assert stored_newest() == after


def explorer_rows(html):
    return {int(pk) for pk in re.findall(r'<tr data-result="(\d+)"', html)}


def test_publishing_and_retracting_runs_keep_the_flag(staff, anonymous, settings):
    settings.CATALOGUE_STAMP_TTL = 0  # pages see each write at once
    seed_profiles_for_tests()
    target = Target(name="maria", engine="mysql", host="127.0.0.1", port=3306, database="sbtest", user="bench",
                    vcpus=2, memory_gb=4)
    target.set_password("x-unused-secret-1")
    target.save()
    runs = [Run.objects.create(target=target, profile=BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick"),
                               params={}, requested_by=staff.user, state=RunState.SUCCEEDED,
                               server_version="10.11.19-MariaDB-0+deb12u1", tool_version="1.0.20",
                               summary={"tps": tps, "qps": tps * 20, "transactions": 2437, "threads": 2})
            for tps in (812.345, 790.5)]
    vendor_flags = stored_newest()
    for run in runs:
        assert staff.post(f"/runs/{run.pk}/publish/").status_code == 302
        run.refresh_from_db()
    first, second = (run.published_result for run in runs)
    # both rows of one variant in the one internal document: both its newest edition, listed by default
    assert first.is_newest and second.is_newest
    default_view = "/explore/?engine=mysql&vcpus=2&include_internal=true"
    assert {first.pk, second.pk} <= explorer_rows(anonymous.get(default_view).content.decode())
    assert staff.post(f"/runs/{runs[0].pk}/retract/", {"reason": "smoke-sized"}).status_code == 302
    assert not PublishedResult.objects.filter(pk=first.pk).exists()
    second.refresh_from_db()
    assert second.is_newest
    shown = explorer_rows(anonymous.get(default_view).content.decode())
    assert second.pk in shown and first.pk not in shown
    assert stored_newest() == vendor_flags == expected_newest()  # vendor rows untouched
