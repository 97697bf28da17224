"""Cross-check the whitepaper data files against the source documents themselves.

Every results table of every seed document (``../shared/seeds/*.txt``, or ``$SEEDS_DIR``) is parsed
independently of the importer (tests/seedcheck.py) and compared with the YAML file whose
``document.source_file`` names that seed (whitepaper/data/*.yaml), table by table and row by row:

* the same number of tables, in order (the Alibaba document prints no labels: matched by order);
* where the document prints a label, the same label (and ``label_printed`` must say whether it does);
* per table the same number of rows (a table continued after a page break is one table);
* per row the same printed numeric tokens in the same order, compared as strings ("843.00" is not
  "843"): vcpus, memory_gb, max_connections, iops (unless ``disk``), tps, qps, tpm, capacity_rows,
  data_rows, hot_rows, ro_qps, rw_qps; and, by the column headers, each of those fields, plus the
  spec code, storage, deployment and SQL Server version/edition where the document prints them.

Plain pytest: no Django, no database. Run with
``.venv/bin/pytest -p no:django tests/test_seed_crosscheck.py -q``.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import seedcheck  # noqa: E402  (tests/ is not a package)
from seeds import require_seeds_dir, seeds_dir  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DATA_DIR = REPO / "whitepaper" / "data"

#: the YAML columns holding printed numbers, compared with the seed's numeric tokens
NUMERIC_COLUMNS = (
    "vcpus",
    "memory_gb",
    "max_connections",
    "iops",
    "tps",
    "qps",
    "tpm",
    "capacity_rows",
    "data_rows",
    "hot_rows",
    "ro_qps",
    "rw_qps",
)
#: YAML values meaning "the document prints no number here"
NO_NUMBER = ("", "disk")

DEPLOYMENTS = {"HA实例": "ha", "单实例": "single"}
EDITIONS = [("企业版", "enterprise"), ("标准版", "standard"), ("WEB", "web")]

MAX_PROBLEMS_SHOWN = 40


@pytest.fixture(autouse=True)
def _clear_cache():
    """Override tests/conftest.py's autouse cache-clearing fixture: these tests touch neither
    Django nor its cache, and must run with ``-p no:django`` and no services at all."""
    yield


# ---------------------------------------------------------------------------------------------
# locating and loading


def data_files(data_dir: Path) -> list[Path]:
    return sorted(path for path in Path(data_dir).glob("*.yaml") if not path.name.startswith("_"))


#: the base loader (every scalar a string), in its C version when PyYAML has one
_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


def load_yaml(path: Path) -> dict:
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_LOADER)


def documents_by_source(data_dir: Path) -> dict[str, Path]:
    """source_file -> YAML path, for every document file in data_dir."""
    found: dict[str, Path] = {}
    for path in data_files(data_dir):
        source = ((load_yaml(path) or {}).get("document") or {}).get("source_file", "")
        if source:
            found[source] = path
    return found


# ---------------------------------------------------------------------------------------------
# comparison


def _instance_class_version(text: str) -> str:
    versions = []
    for match in re.findall(r"\d{4}(?:\s*R2)?", text):
        version = re.sub(r"\s+", " ", match)
        if version not in versions:
            versions.append(version)
    return "+".join(versions)


def _instance_class_edition(text: str) -> str:
    upper = text.upper()
    hits = sorted((upper.find(word), name) for word, name in EDITIONS if word in upper)
    return "+".join(name for _, name in hits)


def _yaml_value(table: dict, columns: list[str], values: list[str], name: str) -> str | None:
    """A row's value for a column, falling back to the table-level key; None when absent."""
    if name in columns:
        return values[columns.index(name)]
    value = table.get(name)
    return value if isinstance(value, str) else None


def compare_row(table: dict, columns: list[str], values: list[str], row: seedcheck.Row) -> list[str]:
    """Differences between one YAML row and the row parsed from the seed, as 'field: ...' strings."""
    problems: list[str] = []
    fields = row.fields

    # 1. field by field, by the printed column headers
    for name in columns:
        if name not in NUMERIC_COLUMNS:
            continue
        expected = values[columns.index(name)]
        found = fields.get(name, "")
        if expected in NO_NUMBER:
            if seedcheck.is_number(found):
                problems.append(f"{name}: YAML {expected!r} (no number) but text prints {found!r}")
        elif found != expected:
            problems.append(f"{name}: YAML {expected!r} != text {found or '(no number)'!r}")
    for name in ("flavor", "storage"):
        if name in columns and name in fields and values[columns.index(name)] != fields[name]:
            problems.append(f"{name}: YAML {values[columns.index(name)]!r} != text {fields[name]!r}")
    if "deployment" in fields:
        expected = _yaml_value(table, columns, values, "deployment")
        found = DEPLOYMENTS.get(fields["deployment"], fields["deployment"])
        if expected is not None and expected != found:
            problems.append(f"deployment: YAML {expected!r} != text {fields['deployment']!r} ({found})")
    if "instance_class" in fields:
        printed = fields["instance_class"]
        for name, found in (
            ("version", _instance_class_version(printed)),
            ("edition", _instance_class_edition(printed)),
        ):
            expected = _yaml_value(table, columns, values, name)
            if expected is not None and expected != found:
                problems.append(f"{name}: YAML {expected!r} != text {printed!r} ({found})")

    # 2. the printed numeric tokens, in order (catches extra, missing or reordered numbers)
    expected_numbers = [
        values[index]
        for index, name in enumerate(columns)
        if name in NUMERIC_COLUMNS and values[index] not in NO_NUMBER
    ]
    if expected_numbers != row.numbers and not problems:
        problems.append(f"numbers: YAML {expected_numbers} != text {row.numbers}")
    return problems


def compare_document(doc: dict, text: str, source: str) -> tuple[list[str], list[seedcheck.Table]]:
    """Compare one loaded YAML document with its seed text. Returns (problems, parsed tables)."""
    parsed = seedcheck.parse_tables(text)
    tables = doc.get("tables") or []
    problems: list[str] = []

    if len(tables) != len(parsed):
        problems.append(
            f"{source}: {len(tables)} tables in YAML, {len(parsed)} in the text\n"
            f"    YAML: {[t.get('label') for t in tables]}\n"
            f"    text: {[t.label or f'(no label, line {t.line})' for t in parsed]}"
        )

    for number, (table, found) in enumerate(zip(tables, parsed), start=1):
        label = table.get("label", "")
        where = f"{source}: table {number} {label!r} (text line {found.line})"
        printed = table.get("label_printed", "true") == "true"
        if found.label is None:
            if printed:
                problems.append(f"{where}: label_printed is 'true' but the text prints no label here")
        elif not printed:
            problems.append(f"{where}: label_printed is 'false' but the text prints {found.label!r}")
        elif label != found.label:
            problems.append(f"{where}: label: YAML {label!r} != text {found.label!r}")

        columns = table.get("columns") or []
        rows = table.get("rows") or []
        if len(rows) != len(found.rows):
            problems.append(f"{where}: {len(rows)} rows in YAML, {len(found.rows)} in the text")
        for index, (values, row) in enumerate(zip(rows, found.rows), start=1):
            if len(values) != len(columns):
                problems.append(
                    f"{where} row {index}: {len(values)} values for {len(columns)} columns {columns}"
                )
                continue
            for problem in compare_row(table, columns, values, row):
                problems.append(f"{where} row {index} (text line {row.line}): {problem}")
    return problems, parsed


def crosscheck(data_dir: Path, seeds: Path) -> dict[str, list[str]]:
    """Compare every document file in data_dir with its seed; source_file -> problems."""
    results: dict[str, list[str]] = {}
    for source, path in documents_by_source(data_dir).items():
        seed = Path(seeds) / source
        if not seed.is_file():
            results[source] = [f"{path.name}: source_file {source!r} not found in {seeds}"]
            continue
        problems, _ = compare_document(load_yaml(path), seed.read_text(encoding="utf-8"), source)
        results[source] = problems
    return results


def _format(problems: list[str]) -> str:
    shown = problems[:MAX_PROBLEMS_SHOWN]
    more = len(problems) - len(shown)
    return "\n".join(shown + ([f"... and {more} more"] if more > 0 else []))


# ---------------------------------------------------------------------------------------------
# summary line per document ("<file>: N tables, M rows"), printed with -s and at the end


_SUMMARY: dict[str, str] = {}


class _SummaryPlugin:
    def pytest_terminal_summary(self, terminalreporter):
        if _SUMMARY:
            terminalreporter.section("seed cross-check")
            for source in sorted(_SUMMARY):
                terminalreporter.write_line(_SUMMARY[source])


@pytest.fixture(scope="session")
def summary(request):
    manager = request.config.pluginmanager
    if not manager.has_plugin("seed-crosscheck-summary"):
        manager.register(_SummaryPlugin(), "seed-crosscheck-summary")
    return _SUMMARY


# ---------------------------------------------------------------------------------------------
# the cross-check, one test per seed document


def _sources() -> list[str]:
    try:
        return sorted(documents_by_source(DATA_DIR))
    except Exception:  # a broken data file: let the test below report it, not collection
        return sorted(path.name for path in data_files(DATA_DIR))


@pytest.mark.parametrize("source", _sources())
def test_data_matches_seed(source, summary):
    seeds = require_seeds_dir()
    path = documents_by_source(DATA_DIR).get(source)
    assert path is not None, f"no data file in {DATA_DIR} names {source} as its source_file"
    seed = seeds / source
    assert seed.is_file(), f"{path.name}: source_file {source} not found in {seeds}"

    problems, parsed = compare_document(load_yaml(path), seed.read_text(encoding="utf-8"), source)
    line = f"{source}: {len(parsed)} tables, {sum(len(t.rows) for t in parsed)} rows"
    summary[source] = line
    print(line)
    assert not problems, f"{path.name} disagrees with {source}:\n" + _format(problems)


def test_every_seed_has_a_data_file():
    seeds = require_seeds_dir()
    sources = set(documents_by_source(DATA_DIR))
    missing = sorted(path.name for path in seeds.glob("*.txt") if path.name not in sources)
    assert not missing, f"seed documents with no data file in {DATA_DIR}: {missing}"


# ---------------------------------------------------------------------------------------------
# the check can fail: alter a copy of the data and see the mismatch reported


def _copy_data(tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(DATA_DIR, copy)
    return copy


def _edit_table(data_dir: Path, source: str, edit) -> dict:
    """Load the copy's document for source, apply edit(doc), write it back; return the doc."""
    path = documents_by_source(data_dir)[source]
    doc = load_yaml(path)
    edit(doc)
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return doc


def _first_table_with(doc: dict, column: str) -> tuple[int, dict]:
    for index, table in enumerate(doc["tables"]):
        if column in table.get("columns", []) and table.get("rows"):
            return index, table
    raise LookupError(column)


def test_altered_tps_is_reported(tmp_path):
    seeds = require_seeds_dir()
    data = _copy_data(tmp_path)
    source = sorted(documents_by_source(data))[0]
    assert crosscheck(data, seeds)[source] == [], "the unaltered copy must pass"

    changed = {}

    def bump_tps(doc):
        _, table = _first_table_with(doc, "tps")
        column = table["columns"].index("tps")
        row = table["rows"][-1]
        changed.update(label=table["label"], row=len(table["rows"]), old=row[column])
        row[column] = row[column] + "1"  # "843.00" -> "843.001": one digit more

    _edit_table(data, source, bump_tps)
    problems = crosscheck(data, seeds)[source]
    new = changed["old"] + "1"
    expected = (
        f"table 1 {changed['label']!r}",
        f"row {changed['row']} ",
        f"tps: YAML {new!r} != text {changed['old']!r}",
    )
    assert len(problems) == 1, problems
    assert all(part in problems[0] for part in expected), problems
    assert problems[0].startswith(source)


def test_altered_label_row_count_and_disk_are_reported(tmp_path):
    seeds = require_seeds_dir()
    data = _copy_data(tmp_path)
    sources = documents_by_source(data)
    # a document whose tables print labels and hold "disk" IOPS cells
    source = next(
        s
        for s, path in sorted(sources.items())
        if any(
            t.get("label_printed") == "true" and any("disk" in r for r in t.get("rows", []))
            for t in load_yaml(path)["tables"]
        )
    )

    def spoil(doc):
        tables = doc["tables"]
        labelled = [t for t in tables if t.get("label_printed") == "true"]
        labelled[0]["label"] += " (typo)"
        labelled[1]["rows"].pop()
        disk_table = next(t for t in tables if any("disk" in r for r in t["rows"]))
        row = next(r for r in disk_table["rows"] if "disk" in r)
        row[row.index("disk")] = "1234"

    _edit_table(data, source, spoil)
    text = "\n".join(crosscheck(data, seeds)[source])
    assert "(typo)" in text and "label: YAML" in text
    assert "rows in YAML" in text
    assert "iops: YAML '1234' != text" in text


def test_missing_table_is_reported(tmp_path):
    seeds = require_seeds_dir()
    data = _copy_data(tmp_path)
    source = sorted(documents_by_source(data))[0]
    _edit_table(data, source, lambda doc: doc["tables"].pop())
    problems = crosscheck(data, seeds)[source]
    assert problems and "tables in YAML" in problems[0]


MUTATIONS = {
    "flavor": lambda v: v + "x",
    "storage": lambda v: "9" + v,
    "hot_rows": lambda v: v.replace("亿", "万"),
    "capacity_rows": lambda v: "1" + v,
    "ro_qps": lambda v: v + "0",
    "max_connections": lambda v: v + "0",
    "qps": lambda v: v[:-1],
    "memory_gb": lambda v: str(int(v) * 2),
    "tpm": lambda v: v + "0",
    "deployment": lambda v: {"ha": "single", "single": "ha"}[v],
    "edition": lambda v: "enterprise" if v != "enterprise" else "standard",
    "version": lambda v: v + " R2",
}


@pytest.mark.parametrize("column", sorted(MUTATIONS))
def test_altered_field_is_reported(column):
    """Change one value of each kind in memory: the comparison names the field."""
    seeds = require_seeds_dir()
    for source, path in sorted(documents_by_source(DATA_DIR).items()):
        doc = load_yaml(path)
        try:
            index, table = _first_table_with(doc, column)
        except LookupError:
            continue
        position = table["columns"].index(column)
        row = table["rows"][0]
        row[position] = MUTATIONS[column](row[position])
        problems, _ = compare_document(doc, (seeds / source).read_text(encoding="utf-8"), source)
        assert len(problems) == 1, problems
        assert f"table {index + 1} " in problems[0] and " row 1 " in problems[0], problems
        assert f": {column}: YAML {row[position]!r} != text" in problems[0], problems
        return
    pytest.fail(f"no data file has a {column} column")


def test_skips_without_seeds_outside_ci(monkeypatch, tmp_path):
    monkeypatch.setenv("SEEDS_DIR", str(tmp_path / "nowhere"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"source documents not found at .*nowhere; set SEEDS_DIR"):
        require_seeds_dir()


def test_fails_without_seeds_in_ci(monkeypatch, tmp_path):
    monkeypatch.setenv("SEEDS_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"source documents not found at .*nowhere; set SEEDS_DIR"):
        require_seeds_dir()


def test_finds_the_texts_beside_the_checkout_by_default(monkeypatch):
    monkeypatch.delenv("SEEDS_DIR", raising=False)
    assert seeds_dir() == REPO.parent / "shared" / "seeds"


# ---------------------------------------------------------------------------------------------
# the parser on its own (synthetic text: these run without the seeds)


SAMPLE = "\n".join(
    [
        "规格名称\tvCPUs / 内存\tCPU\t基准 / 最大带宽\t内存收发包\t规格参考价",
        '<input type="radio"/> c3.large.2\t2vCPUs 4GB\tIntel\t0.6/1.5 Gbit/s\t300,000\t¥0.46/小时',
        "",
        "表 1-1 CPU:内存=1:2\t\t\t\t\t",
        "CPU(Core)\t内存(GB)\t最大连接数 (压力测试值)\tTPS\tQPS\tIOPS",
        "1\t2\t800\t157\t3140\t请参见 关于IOPS",
        "2\t4\t1500\t362.50\t7239\t",
        "",
        "CPU(Core)\t内存(GB)\t最大连接数 (压力测试值)\tTPS\tQPS\tIOPS",
        "4\t8\t2500\t834\t16672\t",
        "",
        "须知\t\t\t\t\t",
        "CPU(Core)\t内存(GB)\t最大连接数 (压力测试值)\tTPS\tQPS\tIOPS",
        "2\t8\t2500\t621\t12394\t请参见 关于IOPS",
        "",
        "表 3-1 测试列表",
        "",
        "| 实例类型 | Instance class | CPU/ Core | Memory ( GB ) | TPM | TPS | IOPS |",
        "|------|------|------|------|------|------|------|",
        "| 单实例 | 2014 WEB | 4 | 16 | 550000 | 10000 | 6000 |",
        "",
        "| 实例类型 | Instance class | CPU/ Core | Memory ( GB ) | TPM | TPS | IOPS |",
        "|------|------|------|------|------|------|------|",
        "|      | 2014 WEB | 8 | 32 | 1100000 | 20000 | 12000 |",
        "",
        "2.3 测试结果",
        "",
        "规格\t预计可存储数据量\t测试数据量\t热(活跃)数据量\t只读QPS\t读写QPS",
        "ppas.x8.4xlarge.232核256G 2T\t100亿\t10亿\t5亿\t404992\t269850",
        "pg.x8.medium.2 2核16G250G\t12.5亿\t1亿\t5000万\t37245\t24520",
    ]
)


def test_parser_tables_labels_continuations_and_screenshots():
    tables = seedcheck.parse_tables(SAMPLE)
    assert [t.label for t in tables] == ["表 1-1 CPU:内存=1:2", None, "表 3-1 测试列表", None]
    assert [len(t.rows) for t in tables] == [3, 1, 2, 2]
    assert tables[0].continuations == 1 and tables[2].continuations == 1
    assert tables[0].numbers == [
        ["1", "2", "800", "157", "3140"],
        ["2", "4", "1500", "362.50", "7239"],
        ["4", "8", "2500", "834", "16672"],
    ]
    assert tables[0].rows[0].fields["iops"] == "请参见 关于IOPS"


def test_parser_merged_cells_and_sql_server_text_cells():
    table = seedcheck.parse_tables(SAMPLE)[2]
    assert [r.numbers for r in table.rows] == [
        ["4", "16", "550000", "10000", "6000"],
        ["8", "32", "1100000", "20000", "12000"],
    ]
    assert [r.fields["deployment"] for r in table.rows] == ["单实例", "单实例"]
    assert _instance_class_version("2014 企业版、2014 标准版") == "2014"
    assert _instance_class_edition("2014 企业版、2014 标准版") == "enterprise+standard"
    assert _instance_class_version("2008 R2 企业版") == "2008 R2"
    assert _instance_class_edition("2014 Web") == "web"


def test_parser_spec_cells_and_row_counts():
    table = seedcheck.parse_tables(SAMPLE)[3]
    assert table.numbers == [
        ["32", "256", "100亿", "10亿", "5亿", "404992", "269850"],
        ["2", "16", "12.5亿", "1亿", "5000万", "37245", "24520"],
    ]
    assert seedcheck.split_spec("ppas.x8.4xlarge.232核256G 2T") == {
        "flavor": "ppas.x8.4xlarge.2",
        "vcpus": "32",
        "memory_gb": "256",
        "storage": "2T",
    }
    assert seedcheck.split_spec("rds.ppas.st.h43 60核470G3T") == {
        "flavor": "rds.ppas.st.h43",
        "vcpus": "60",
        "memory_gb": "470",
        "storage": "3T",
    }
    assert seedcheck.split_spec("2014 WEB") is None
