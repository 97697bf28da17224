"""Independent parser for the results tables of the source whitepapers.

Given the extracted text of one seed document (``../shared/seeds/*.txt``), ``parse_tables`` returns
its results tables, in document order: the label when one is printed (``表 1-1 CPU:内存=1:2``), the
header as printed, and the rows, each with the printed numeric tokens in order (strings, exactly as
printed: ``843.00`` stays ``843.00``, ``150亿`` stays ``150亿``).

This module is deliberately independent of the importer and of the YAML data files: it is the
other half of a cross-check (tests/test_seed_crosscheck.py), so it must not share code with the
thing it checks. Pure Python, no Django, no I/O.

What the extracted text looks like, and how each trap is handled:

* Tables are either tab-separated (one row a line, cells split on ``\\t``) or markdown
  (lines starting with ``|``; ``|---|`` separator lines are skipped).
* A table label is a line ``表 N-M ...`` (sometimes followed by stray tabs). It names the next table.
  Some tables have no printed label (000: the 5.7 dedicated 1:4 table; 001 prints none at all):
  their ``label`` is ``None``.
* A table can continue after a page break with its header repeated. When a header row follows an
  open table with nothing but blank lines in between (no label, no prose), and it has the same
  number of cells, it is a continuation: its rows belong to the previous table.
* IOPS cells may hold a note instead of a number ("请参见 关于IOPS", or a garbled "RDS for
  PostgreSQL支持的IOPS取决于云硬盘…" in 003/004): such a cell is text, not a numeric token.
* Spec cells pack code, cores, memory and storage ("ppas.x8.4xlarge.2 32核256G2T"), sometimes
  garbled without the space ("ppas.x8.4xlarge.232核256G 2T"): they are split into flavor, cores,
  memory and storage; cores and memory are numeric tokens, flavor and storage are kept as fields.
* Row counts are printed with 亿/万 ("150亿", "12.5亿", "5000万"): numeric tokens, kept as printed.
* SQL Server tables have text cells (HA实例, "2014 企业版、2014 标准版", "2014 WEB") and merged
  cells that are empty in the rows they cover (also after a page break): text cells are not numeric
  tokens; an empty 实例类型 / Instance class cell takes the value of the row above.
* ECS console screenshot tables (rows with ``<input type="radio"/>`` and ``¥`` prices) are not
  results: such lines are ignored, and any table without numeric data rows is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Row", "Table", "parse_tables", "split_spec", "is_number", "header_field"]

#: a numeric token as printed: integer or decimal, optionally with a 亿 (1e8) or 万 (1e4) suffix
NUMBER_RE = re.compile(r"^\d+(?:\.\d+)?(?:亿|万)?$")

#: a table label as printed ("表 1-1 CPU:内存=1:2", "表 3-1 测试列表")
LABEL_RE = re.compile(r"^表\s*\d+-\d+(?:\s.*)?$")

#: a spec cell: code, then cores (核), memory (G) and storage (G/T). The code and the cores are
#: separated by white space or, in the garbled form, not at all: then the code ends in ".<digit>"
#: (the memory-ratio suffix of the spec codes, e.g. "ppas.x8.4xlarge.2") and the cores follow.
SPEC_RE = re.compile(
    r"^(?P<flavor>[A-Za-z][\w.]*?)(?:\s+|(?<=\.\d)(?=\d))"
    r"(?P<vcpus>\d+)\s*核\s*(?P<memory_gb>\d+)\s*G\s*(?P<storage>\d+\s*[GT])$"
)

#: a bare spec code cell ("rds.mysql.s2.large", "c3.medium.4", "mysql.x8.2xlarge.2")
FLAVOR_RE = re.compile(r"^[a-z][a-z0-9]*(?:\.[a-z0-9]+)+$")

#: lines of ECS console screenshots (instance-type pickers with prices): never results
SCREENSHOT_RE = re.compile(r"<input\b|¥")

MARKDOWN_SEPARATOR_RE = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")

#: header keywords -> field names, first match wins (more specific first)
HEADER_FIELDS = [
    ("只读QPS", "ro_qps"),
    ("读写QPS", "rw_qps"),
    ("QPS", "qps"),
    ("TPS", "tps"),
    ("TPM", "tpm"),
    ("IOPS", "iops"),
    ("连接数", "max_connections"),
    ("预计可存储数据量", "capacity_rows"),
    ("热", "hot_rows"),  # 热(活跃)数据量
    ("测试数据量", "data_rows"),
    ("CPU", "vcpus"),  # CPU(Core), CPU核数, CPU/ Core, "CPU(Cor e)"
    ("内存", "memory_gb"),
    ("MEMORY", "memory_gb"),
    ("规格编号", "flavor"),
    ("规格", "spec"),  # packed spec cell: code, cores, memory, storage
    ("实例类型", "deployment"),
    ("INSTANCECLASS", "instance_class"),
]

#: text columns whose merged cells are printed empty in the rows they cover
MERGED_TEXT_FIELDS = ("deployment", "instance_class")

MIN_NUMBERS_PER_ROW = 3
MIN_HEADER_CELLS = 3


@dataclass
class Row:
    """One data row as printed."""

    line: int  # 1-based line number in the seed text
    cells: list[str]  # the cells, stripped
    numbers: list[str]  # the printed numeric tokens, in order (a spec cell gives cores, memory)
    fields: dict[str, str] = field(default_factory=dict)  # header field -> value (see HEADER_FIELDS)


@dataclass
class Table:
    """One results table (continuations after page breaks merged)."""

    label: str | None  # as printed, or None when no label is printed
    line: int  # line of the (first) header, or of the first row
    header: list[str]
    fields: list[str | None]  # header cell -> field name (None: not recognised)
    rows: list[Row] = field(default_factory=list)
    continuations: int = 0  # how many times the header was repeated after a page break

    @property
    def numbers(self) -> list[list[str]]:
        return [row.numbers for row in self.rows]


def is_number(cell: str) -> bool:
    return bool(NUMBER_RE.match(cell.strip()))


def split_spec(cell: str) -> dict[str, str] | None:
    """Split a packed spec cell, or return None when the cell is not one.

    >>> split_spec("ppas.x8.4xlarge.232核256G 2T")
    {'flavor': 'ppas.x8.4xlarge.2', 'vcpus': '32', 'memory_gb': '256', 'storage': '2T'}
    """
    match = SPEC_RE.match(cell.strip())
    if not match:
        return None
    parts = match.groupdict()
    parts["storage"] = re.sub(r"\s+", "", parts["storage"])
    return parts


def _normalise(text: str) -> str:
    text = re.sub(r"<br\s*/?>", "", text)
    text = text.replace("（", "(").replace("）", ")")
    return re.sub(r"\s+", "", text).upper()


def header_field(cell: str) -> str | None:
    """The field a header cell names, or None."""
    norm = _normalise(cell)
    for keyword, name in HEADER_FIELDS:
        if _normalise(keyword) in norm:
            return name
    return None


def _cells(line: str) -> list[str] | None:
    """Split a table line into cells, or return None when the line is not a table line."""
    stripped = line.strip()
    if stripped.startswith("|"):
        inner = stripped[1:]
        if inner.endswith("|"):
            inner = inner[:-1]
        return [cell.strip() for cell in inner.split("|")]
    if "\t" in line:
        return [cell.strip() for cell in line.rstrip("\n").split("\t")]
    return None


def _row_numbers(cells: list[str]) -> list[str]:
    numbers: list[str] = []
    for cell in cells:
        spec = split_spec(cell)
        if spec:
            numbers += [spec["vcpus"], spec["memory_gb"]]
        elif is_number(cell):
            numbers.append(cell)
    return numbers


def _make_row(lineno: int, cells: list[str], table: Table) -> Row:
    row = Row(line=lineno, cells=cells, numbers=_row_numbers(cells))
    previous = table.rows[-1].fields if table.rows else {}
    for index, cell in enumerate(cells):
        name = table.fields[index] if index < len(table.fields) else None
        spec = split_spec(cell)
        if spec:
            row.fields.update(spec)
            continue
        if not name:
            if FLAVOR_RE.match(cell) and "flavor" not in row.fields:
                row.fields["flavor"] = cell
            continue
        if name in MERGED_TEXT_FIELDS and not cell:
            cell = previous.get(name, "")
        row.fields[name] = cell
    return row


def parse_tables(text: str) -> list[Table]:
    """Return the results tables of one seed document, in document order."""
    tables: list[Table] = []
    current: Table | None = None  # the table rows go to
    is_open = False  # only blank lines since the current table's last header/row
    pending_label: str | None = None

    def close() -> None:
        nonlocal current, is_open
        current, is_open = None, False

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip():
            continue  # blank lines neither open nor close a table
        if SCREENSHOT_RE.search(line):
            close()  # a console screenshot, not a result
            continue
        cells = _cells(line)
        non_empty = [cell for cell in (cells or [line.strip()]) if cell]
        if len(non_empty) == 1 and LABEL_RE.match(non_empty[0]):
            close()
            pending_label = re.sub(r"\s+", " ", non_empty[0]).strip()
            continue
        if cells is None:
            close()  # prose: ends a table, and a label not followed by its table is dropped
            pending_label = None
            continue
        if MARKDOWN_SEPARATOR_RE.match(line.strip()):
            continue
        numbers = _row_numbers(cells)
        if len(numbers) >= MIN_NUMBERS_PER_ROW:
            if current is None:  # rows without a header: a table of its own
                current = Table(label=pending_label, line=lineno, header=[], fields=[])
                pending_label = None
                tables.append(current)
            current.rows.append(_make_row(lineno, cells, current))
            is_open = True
            continue
        if not numbers and len(non_empty) >= MIN_HEADER_CELLS:
            if is_open and current is not None and len(cells) == len(current.header):
                current.continuations += 1  # header repeated after a page break
                continue
            current = Table(
                label=pending_label,
                line=lineno,
                header=cells,
                fields=[header_field(cell) for cell in cells],
            )
            pending_label = None
            tables.append(current)
            is_open = True
            continue
        close()  # any other tab line ("须知\t\t\t", a table of contents entry ...): prose
        pending_label = None
    return [table for table in tables if table.rows]
