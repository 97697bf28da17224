"""draft_whitepaper and import_whitepapers --dry-run through their CLI (issue 24).

Expected rows come from the hand-made data files (whitepaper/data/*.yaml, read here with YAML's base
loader, not through the importer), which tests/test_seed_crosscheck.py ties to the documents; the
made-up edition's rows are the bundled file's rows with the test's own edits applied by hand.
"""

import io
import re
import time

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import Count, Max

from testbed.drafting import hand_made, made_up_edition
from tests.seeds import require_seeds_dir
from whitepaper.models import Document, PublishedResult

pytestmark = pytest.mark.django_db

BUNDLED = ["alibaba-2019-06-18-rds", "huawei-2018-12-11-rds", "huawei-2023-08-03-rds", "huawei-2025-10-21-mysql",
           "huawei-2025-10-21-postgresql"]
IDENTITY = ["engine", "version", "family", "memory_ratio", "flavor", "vcpus", "memory_gb", "storage",
            "deployment", "edition"]
METRICS = ["max_connections", "tps", "qps", "tpm", "capacity_rows", "data_rows", "hot_rows", "ro_qps", "rw_qps",
           "iops"]


def expected_rows(data):
    """(table label, identity..., every metric as printed) per row of a data file, read directly."""
    rows = []
    for table in data["tables"]:
        for cells in table["rows"]:
            values = dict(zip(table["columns"], cells))
            identity = tuple(values.get(k, table.get(k) or "") or "" for k in IDENTITY)
            rows.append((table["label"], *identity, *(values.get(k, "") for k in METRICS)))
    return sorted(rows)


def imported_rows(slug):
    rows = []
    results = PublishedResult.objects.filter(table__document__slug=slug).select_related(
        "table", "engine_version__engine", "flavor__family")
    for r in results:
        f = r.flavor
        identity = (r.engine_version.engine.slug, r.engine_version.version, f.family.slug if f.family else "",
                    f.memory_ratio, f.spec_code, str(f.vcpus), str(f.memory_gb), f.storage, r.deployment, r.edition)
        printed = dict(r.printed)
        if r.iops_depends_on_disk:
            printed["iops"] = "disk"
        rows.append((r.table.label, *identity, *(printed.get(k, "") for k in METRICS)))
    return sorted(rows)


def draft(source, out, vendor=None):
    err = io.StringIO()
    args = [str(source), "--out", str(out)] + (["--vendor", vendor] if vendor else [])
    call_command("draft_whitepaper", *args, stderr=err)
    return err.getvalue()


def run_import(*args):
    out = io.StringIO()
    call_command("import_whitepapers", *[str(a) for a in args], stdout=out)
    return out.getvalue()


def stamp():
    return (Document.objects.aggregate(changed=Max("changed_at"), n=Count("pk")), PublishedResult.objects.count(),
            sorted(PublishedResult.objects.values_list("pk", "printed", "flavor_id", "table_id")))


@pytest.mark.parametrize("slug", BUNDLED)
def test_each_source_text_drafts_and_imports_to_exactly_the_bundled_rows(slug, tmp_path):
    data = hand_made(slug)
    source = require_seeds_dir() / data["document"]["source_file"]
    out = tmp_path / "draft.yaml"
    message = draft(source, out)
    drafted = yaml.load(out.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    assert drafted["document"]["slug"] == slug
    assert drafted["document"]["published"] == data["document"]["published"]
    assert drafted["document"]["edition"] == data["document"]["edition"]
    run_import(out)  # the draft imports as drafted, review marks and all
    expected = expected_rows(data)
    assert imported_rows(slug) == expected  # every row, no extra: flavour, family, ratio, size, metrics, label
    marks = drafted["review"]
    assert f"{len(marks)} marks for review" in message
    # no review mark on a result number: marks name labels, versions, families, ratios, methodology
    assert not [m for m in marks if m["field"] in METRICS], marks
    # the methodology numbers the draft copies from command lines are the hand-made file's
    for drafted_methodology in drafted["methodologies"]:
        tool = drafted_methodology["tool"]
        for name in ("tables", "rows_per_table", "duration_s", "report_interval_s"):
            if drafted_methodology.get(name):
                assert drafted_methodology[name] in {m.get(name) for m in data["methodologies"] if m["tool"] == tool}
    print(f"{slug}: {len(expected)} rows, {len(marks)} review marks")


def made_up_expected(data):
    """The same edits, made by hand on the bundled file's rows."""
    tables = {t["label"]: t for t in data["tables"]}
    tables["表 2-1 CPU:内存=1:2"]["rows"][0] = ["1", "2", "800", "205.31", "4106.22", "disk"]
    tables["表 3-5 CPU:内存=1:4"]["rows"][1] = ["4", "16", "5000", "1111", "22220", "disk"]
    del tables["表 3-6 CPU:内存=1:4"]["rows"][4]
    tables["表 4-1 CPU:内存=1:2"]["rows"].insert(2, ["16", "32", "10000", "3010.5", "60210.0", "disk"])
    return expected_rows(data)


def test_a_made_up_next_edition_drafts_to_exactly_the_rows_written(tmp_path):
    data = hand_made("huawei-2025-10-21-mysql")
    text = (require_seeds_dir() / data["document"]["source_file"]).read_text(encoding="utf-8")
    source = tmp_path / "huawei-mysql-2026.txt"
    source.write_text(made_up_edition(text), encoding="utf-8")
    run_import()  # the bundled catalogue: the previous editions
    before = stamp()

    started = time.monotonic()
    draft(source, tmp_path / "draft.yaml")
    plan = run_import("--dry-run", tmp_path / "draft.yaml")
    assert stamp() == before  # the dry run wrote nothing
    run_import(tmp_path / "draft.yaml")
    seconds = time.monotonic() - started

    drafted = yaml.load((tmp_path / "draft.yaml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    assert drafted["document"]["slug"] == "huawei-2026-03-02-mysql"
    assert drafted["document"]["edition"] == "02"
    assert plan.splitlines()[0] == "huawei-2026-03-02-mysql: new document"
    assert "rows: 107 created, 0 changed, 0 deleted, 0 unchanged" in plan
    assert imported_rows("huawei-2026-03-02-mysql") == made_up_expected(data)
    assert imported_rows("huawei-2025-10-21-mysql") == expected_rows(hand_made("huawei-2025-10-21-mysql"))
    print(f"made-up edition: draft + dry run + import in {seconds:.2f} s")


def test_dry_run_prints_the_changes_and_writes_nothing(tmp_path):
    run_import()
    data = hand_made("huawei-2025-10-21-mysql")
    tables = {t["label"]: t for t in data["tables"]}
    tables["表 2-1 CPU:内存=1:2"]["rows"][0][3] = "199.99"  # tps 197.19 -> 199.99
    del tables["表 4-4 CPU:内存=1:8"]["rows"][3]  # the 64-core row
    tables["表 4-4 CPU:内存=1:8"]["rows"].append(["96", "768", "100000", "7000", "140000", "disk"])
    data["document"]["title_en"] = "A new title"
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    before = stamp()

    plan = run_import("--dry-run", edited)

    assert stamp() == before  # row counts, every row and the catalogue's freshness stamp unchanged
    assert "huawei-2025-10-21-mysql: changed" in plan
    assert "document title_en: 'Cloud Database RDS for MySQL Performance Whitepaper' -> 'A new title'" in plan
    assert "rows: 0 created, 2 changed, 0 deleted, 105 unchanged" in plan
    assert "~ '表 2-1 CPU:内存=1:2' row 1: tps 197.19 -> 199.99" in plan
    # row 4 of 表 4-4 now prints another flavour: a change of each of its values, old and new
    assert re.search(r"~ '表 4-4 CPU:内存=1:8' row 4: vcpus 64 -> 96; memory_gb 512 -> 768; "
                     r"tps 6484 -> 7000; qps 129684 -> 140000", plan), plan

    tables["表 4-4 CPU:内存=1:8"]["rows"].pop()  # now only dropped
    edited.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    plan = run_import("--dry-run", edited)
    assert "rows: 0 created, 1 changed, 1 deleted, 105 unchanged" in plan
    assert "- '表 4-4 CPU:内存=1:8' row 4: engine mysql, version 8.0, family dedicated" in plan
    assert stamp() == before


def test_dry_run_of_a_new_document_lists_its_tables_and_rows(tmp_path):
    data = hand_made("huawei-2018-12-11-rds")
    data["document"]["slug"] = "huawei-2018-12-11-copy"  # the test database holds the bundled catalogue
    path = tmp_path / "doc.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    before = stamp()
    with pytest.raises(CommandError, match="methodology slug 'huawei-2018-12-11-rds-sysbench-mysql' already "
                                           "belongs to huawei-2018-12-11-rds"):
        run_import("--dry-run", path)  # what the import would refuse, the dry run refuses
    text = path.read_text(encoding="utf-8").replace("huawei-2018-12-11-rds-", "huawei-2018-12-11-copy-")
    path.write_text(text, encoding="utf-8")
    plan = run_import("--dry-run", path)
    assert stamp() == before
    assert plan.startswith("huawei-2018-12-11-copy: new document")
    assert "tables: 7 created, 0 changed, 0 deleted" in plan
    assert "rows: 40 created, 0 changed, 0 deleted, 0 unchanged" in plan
    assert ("+ '表 1-1 标准型' row 1: engine mysql, version 5.6, family standard, memory_ratio 1:4, "
            "flavor c3.medium.4, vcpus 1, memory_gb 4, max_connections 1500, tps 494, qps 9880, iops 1400") in plan


# --- bad input: a clear message naming the line, nothing written ----------------------------------


def seed_text(slug):
    data = hand_made(slug)
    return (require_seeds_dir() / data["document"]["source_file"]).read_text(encoding="utf-8")


def failing_draft(tmp_path, text):
    source = tmp_path / "input.txt"
    source.write_text(text, encoding="utf-8")
    out = tmp_path / "draft.yaml"
    before = stamp()
    with pytest.raises(CommandError) as caught:
        draft(source, out)
    assert not out.exists()  # no draft to import
    assert stamp() == before
    return str(caught.value)


def test_a_text_that_is_not_a_whitepaper_is_refused(tmp_path):
    message = failing_draft(tmp_path, "华为\nMeeting notes\n\nCPU\tTPS\n1\t2\n")
    assert "line 1: not a whitepaper: no publication date on the cover" in message
    message = failing_draft(tmp_path, "Shopping list\n文档版本 01\n发布日期 2024-01-01\nmilk\teggs\n")
    assert "not a whitepaper of a known vendor" in message
    message = failing_draft(tmp_path, "华为\n文档版本 01\n发布日期 2024-01-01\n\nNo tables at all.\n")
    assert "line 1: not a whitepaper: no results table" in message


def test_a_table_with_a_missing_column_names_its_header_line(tmp_path):
    text = seed_text("huawei-2018-12-11-rds")
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("规格编号\tCPU(Core)"))
    lines[header] = lines[header].replace("\tCPU(Core)", "")  # 表 1-1 without its CPU column
    for i in range(header + 1, header + 7):
        cells = lines[i].split("\t")
        lines[i] = "\t".join(cells[:1] + cells[2:])
    message = failing_draft(tmp_path, "\n".join(lines))
    assert f"line {header + 1}: the table's header has no vcpus column" in message


def test_a_number_in_a_wrong_cell_names_its_line(tmp_path):
    text = seed_text("huawei-2018-12-11-rds")
    shifted = text.replace("c3.large.4\t2\t8\t2500\t4000\t558\t11178", "c3.large.4\t2\t8\t2500\t4000\t558\t11178\t77", 1)
    line = text.splitlines().index("c3.large.4\t2\t8\t2500\t4000\t558\t11178") + 1
    message = failing_draft(tmp_path, shifted)
    assert f"line {line}: 8 cells but the header (line {line - 2}) has 7 columns: a cell is out of place" in message

    dropped = text.replace("c3.large.4\t2\t8\t2500\t4000\t558\t11178", "c3.large.4\t2\t8\t4000\t558\t11178", 1)
    message = failing_draft(tmp_path, dropped)
    assert f"line {line}: 6 cells but the header (line {line - 2}) has 7 columns: a cell is missing" in message

    swapped = text.replace("\t2014 Web\t8\t32", "\t8\t2014 Web\t32", 1)  # a number in the Instance class cell
    line = next(i for i, l in enumerate(swapped.splitlines(), start=1) if l.startswith("\t8\t2014 Web"))
    message = failing_draft(tmp_path, swapped)
    assert f"line {line}: a number ('8') in the 'Instance class' column" in message


def test_a_metric_cell_it_cannot_read_is_left_empty_and_listed(tmp_path):
    text = seed_text("huawei-2018-12-11-rds").replace("c3.large.4\t2\t8\t2500\t4000\t558\t11178",
                                                      "c3.large.4\t2\t8\t2500\t4000\t5S8\t11178", 1)
    source = tmp_path / "input.txt"
    source.write_text(text, encoding="utf-8")
    draft(source, tmp_path / "draft.yaml")
    drafted = yaml.load((tmp_path / "draft.yaml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    table = drafted["tables"][0]
    assert table["rows"][1] == ["c3.large.4", "2", "8", "2500", "4000", "", "11178"]  # never a guess
    assert [m for m in drafted["review"] if m["field"] == "tps"] == [
        {"line": "194", "where": "table '表 1-1 标准型'", "field": "tps", "reason": "cell '5S8' is not a number: left empty"}]
    run_import(tmp_path / "draft.yaml")  # and it still imports as drafted
    assert PublishedResult.objects.filter(table__document__slug="huawei-2018-12-11-rds", tps__isnull=True).count() == 1
