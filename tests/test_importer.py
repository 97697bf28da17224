"""import_whitepapers through its CLI: idempotency, and every bad-input case fails with the file, table,
row and field, leaving the catalogue exactly as it was."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from whitepaper.importer import bundled_files
from whitepaper.models import Document, Flavor, Methodology, PublishedResult, ResultTable

pytestmark = pytest.mark.django_db

GOOD = """\
document:
  slug: test-doc
  vendor: huawei
  title: 测试白皮书
  edition: "01"
  published: "2024-01-02"
methodologies:
  - slug: test-doc-sysbench
    name: sysbench test
    tool: sysbench
    tool_version: "1.0.20"
    threads: "64"
    statements_per_transaction: "20"
tables:
  - label: 表 1-1 CPU:内存=1:2
    section: 1.1 测试
    engine: mysql
    version: "8.0"
    family: general
    memory_ratio: "1:2"
    methodology: test-doc-sysbench
    columns: [vcpus, memory_gb, max_connections, tps, qps, iops]
    rows:
      - ["2", "4", "1500", "843.00", "16860.2", disk]
      - ["4", "8", "2500", "1200", "24000", "3000"]
"""


def snapshot():
    return (
        Document.objects.count(), Methodology.objects.count(), ResultTable.objects.count(),
        PublishedResult.objects.count(), Flavor.objects.count(),
        sorted(PublishedResult.objects.values_list("pk", "tps", "qps", "printed")),
    )


def run_import(*paths):
    out = io.StringIO()
    call_command("import_whitepapers", *[str(p) for p in paths], stdout=out)
    return out.getvalue()


def write(tmp_path, text, name="doc.yaml", encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def export_csv(*options):
    out = io.StringIO()
    call_command("export_results", *options, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_bundled_import_is_idempotent():
    before, csv_before = snapshot(), export_csv()
    output = run_import()
    assert snapshot() == before
    assert export_csv() == csv_before
    for line in output.strip().splitlines():
        assert " 0 created, 0 updated" in line and " 0 deleted" in line, line


def test_every_bundled_document_is_loaded():
    assert len(bundled_files()) == 5
    assert Document.objects.count() == 5
    # Every table row of the five documents; the seed cross-check compares them number by number.
    assert PublishedResult.objects.count() == 442


def test_good_file_imports_and_keeps_numbers_as_printed(tmp_path):
    run_import(write(tmp_path, GOOD))
    rows = list(PublishedResult.objects.filter(table__document__slug="test-doc").order_by("position"))
    assert [r.display("tps") for r in rows] == ["843.00", "1200"]
    assert rows[0].display("qps") == "16860.2"
    assert rows[0].iops is None and rows[0].iops_depends_on_disk
    assert rows[1].iops == 3000
    # The CSV's cells since 3.0.0 (issue 52.10): numbers with their two decimals, version with its engine's name ...
    line = next(l for l in export_csv().splitlines() if l.startswith("huawei,test-doc,"))
    assert line.split(",")[:17] == ["huawei", "test-doc", "2024-01-02", "mysql", "MySQL 8.0", "general", "1:2", "", "",
                                    "", "2", "4", "", "1500", "", "843.00", "16860.20"]
    # ... and as printed with the deprecated --printed-cells (the API's printed_cells=true) until its Sunset.
    printed = next(l for l in export_csv("--printed-cells").splitlines() if l.startswith("huawei,test-doc,"))
    assert printed.split(",")[:17] == ["huawei", "test-doc", "2024-01-02", "mysql", "8.0", "general", "1:2", "", "",
                                       "", "2", "4", "", "1500", "", "843.00", "16860.2"]
    assert printed.split(",")[17:] == line.split(",")[17:]  # the rest alike (tps_per_core etc. are computed)
    cells = line.split(",")
    assert cells[26] == "depends on disk"  # iops_note, the last contract column
    # Appended columns: id, url, tps_per_core (843.00 / 2 vCPUs), statements_per_transaction, origin,
    # qps_normalised (16860.2 x 18 / 20 = 15174.18), memory_ratio_derived (none: the document states 1:2), the
    # revision (issue 36.1): Huawei 2023 表 1-11 prints this MySQL 8.0 general 1:2 2 vCPU row as TPS 434, QPS 8679;
    # (843.00 - 434) / 434 = +94.2 %, (16860.2 - 8679) / 8679 = +94.3 %. Then an internal measurement's context
    # (issue 33) and a capacity search's sustained_tps and latency_bound_ms (issue 35.5): empty for a vendor's row.
    # Last, what the newest later edition prints (issue 49.1): Huawei 2025 MySQL 表 of 8.0 general 1:2 prints 2 vCPU as
    # TPS 434, QPS 8679: (434 - 843.00) / 843.00 = -48.5 %, (8679 - 16860.2) / 16860.2 = -48.5 %.
    assert cells[27:] == [str(rows[0].pk), f"/api/v1/results/{rows[0].pk}/", "421.50", "20", "vendor", "15174.18", "",
                          "huawei-2023-08-03-rds", "tps 434 -> 843.00 (+94.2 %); qps 8679 -> 16860.2 (+94.3 %)"] + [""] * 10 + [
                          "huawei-2025-10-21-mysql", "tps 843.00 -> 434 (-48.5 %); qps 16860.2 -> 8679 (-48.5 %)",
                          "", "",  # tps_cv, client_disturbed (issue 46): empty for a vendor's row
                          ""]  # latency_p95_ms (issue 51.1, a metric declared later): vendors print no latency


def test_reimport_after_edit_updates_in_place(tmp_path):
    path = write(tmp_path, GOOD)
    run_import(path)
    ids = set(PublishedResult.objects.filter(table__document__slug="test-doc").values_list("pk", flat=True))
    path.write_text(GOOD.replace('"1200"', '"1250"'), encoding="utf-8")
    assert "0 created, 1 updated" in run_import(path)
    assert set(PublishedResult.objects.filter(table__document__slug="test-doc").values_list("pk", flat=True)) == ids
    assert PublishedResult.objects.get(pk__in=ids, position=2).tps == 1250


BAD_CASES = {
    "missing column value": (lambda t: t.replace('["4", "8", "2500", "1200", "24000", "3000"]',
                                                 '["4", "8", "2500", "1200", "24000"]'),
                             ["表 1-1 CPU:内存=1:2", "row 2", "5 cells for 6 columns"]),
    "missing column in table": (lambda t: t.replace("    columns: [vcpus, memory_gb, max_connections, tps, qps, iops]\n",
                                                    ""), ["field 'columns'", "missing"]),
    "non-numeric number": (lambda t: t.replace('"843.00"', '"84x"'), ["row 1", "field 'tps'", "not a number"]),
    "negative number": (lambda t: t.replace('"1500"', '"-1500"'), ["row 1", "field 'max_connections'", "negative"]),
    "unknown family": (lambda t: t.replace("family: general", "family: turbo"), ["row 1", "field 'family'",
                                                                               "unknown family 'turbo'"]),
    "unknown engine": (lambda t: t.replace("engine: mysql", "engine: oracle"), ["row 1", "field 'engine'",
                                                                              "unknown engine 'oracle'"]),
    "duplicate row": (lambda t: t.replace('["4", "8", "2500", "1200", "24000", "3000"]',
                                          '["2", "4", "1500", "900", "18000", "3000"]'), ["row 2", "duplicate row"]),
    "bad memory ratio": (lambda t: t.replace('memory_ratio: "1:2"', 'memory_ratio: "2:1"'),
                         ["row 1", "field 'memory_ratio'", "1:N"]),
    "bad date": (lambda t: t.replace('"2024-01-02"', '"02/01/2024"'), ["field 'document.published'"]),
    "not yaml": (lambda t: t + "\n  - [unclosed\n", ["not valid YAML"]),
}


@pytest.mark.parametrize("case", BAD_CASES, ids=list(BAD_CASES))
def test_bad_file_changes_nothing_and_names_the_place(tmp_path, case):
    mutate, expected = BAD_CASES[case]
    good = write(tmp_path, GOOD.replace("test-doc", "good-doc"), name="good.yaml")
    bad = write(tmp_path, mutate(GOOD))
    before = snapshot()
    with pytest.raises(CommandError) as excinfo:
        run_import(good, bad)  # the good file is parsed first, but nothing is written
    message = str(excinfo.value)
    assert str(bad) in message
    for fragment in expected:
        assert fragment in message
    assert snapshot() == before


def test_unreadable_file(tmp_path):
    before = snapshot()
    with pytest.raises(CommandError, match=r"nope\.yaml: cannot read file"):
        run_import(tmp_path / "nope.yaml")
    assert snapshot() == before


def test_wrong_encoding(tmp_path):
    before = snapshot()
    bad = write(tmp_path, GOOD, encoding="gb18030")
    with pytest.raises(CommandError, match="wrong encoding: the file must be UTF-8"):
        run_import(bad)
    assert snapshot() == before


def test_failure_in_database_phase_rolls_back_that_document(tmp_path):
    """A methodology slug owned by another document is only found while writing: the transaction rolls back."""
    before = snapshot()
    clash = GOOD.replace("slug: test-doc-sysbench", "slug: huawei-2018-12-11-rds-sysbench-mysql").replace(
        "methodology: test-doc-sysbench", "methodology: huawei-2018-12-11-rds-sysbench-mysql")
    with pytest.raises(CommandError, match="already belongs to huawei-2018-12-11-rds"):
        run_import(write(tmp_path, clash))
    assert snapshot() == before
    assert not Document.objects.filter(slug="test-doc").exists()


def test_renamed_version_leaves_no_orphan(tmp_path):
    from whitepaper.models import EngineVersion

    path = write(tmp_path, GOOD.replace('version: "8.0"', 'version: "8.9"'))
    run_import(path)
    assert EngineVersion.objects.filter(engine__slug="mysql", version="8.9").exists()
    path.write_text(GOOD.replace('version: "8.0"', 'version: "8.8"'), encoding="utf-8")
    run_import(path)
    assert not EngineVersion.objects.filter(engine__slug="mysql", version="8.9").exists()
    assert EngineVersion.objects.filter(engine__slug="mysql", version="8.8").exists()
