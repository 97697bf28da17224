"""A whitepaper's extracted text -> a draft data file (whitepaper/data/README.md) and its review marks.

Pure: text in, a dict out (`draft_text`), no database. What a vendor's tables look like is data
(formats.yaml for what all vendors share, vendors/<slug>.yaml per vendor), so a new edition of a known
vendor's document needs no code. Whatever the text does not determine is written empty and listed
under `review:` in the file (line, field, reason); a number is only ever copied as printed.
Input that is not a whitepaper, or a table that cannot be read, raises DraftError naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

from ..metrics import METRICS, PRINTED_METRICS, SIZING_METRIC_NAMES

HERE = Path(__file__).resolve().parent
VOCABULARY_FILE = HERE.parent / "data" / "_vocabulary.yaml"
NUMBER_RE = re.compile(r"^\d+(?:\.\d+)?$")
ROWS_RE = re.compile(r"^\d+(?:\.\d+)?(?:亿|万)?$")
MARKDOWN_SEPARATOR_RE = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
CJK_RE = re.compile(r"[\u3400-\u9fff]")


class DraftError(Exception):
    """The text cannot be drafted; the message names the line."""

    def __init__(self, reason, line=None):
        self.reason, self.line = reason, line
        super().__init__(f"line {line}: {reason}" if line else reason)


@cache
def formats():
    """formats.yaml (the vendors' shared wording) with the lists the metric declarations give: `numbers` (the columns
    whose cells are printed numbers: the size and every metric a document prints), `row_counts` (those that may carry
    亿/万) and `metrics` (the figures that make a header a result table's: the throughputs sizing asks about)."""
    fmt = yaml.safe_load((HERE / "formats.yaml").read_text(encoding="utf-8"))
    fmt["numbers"] = ["vcpus", "memory_gb", *PRINTED_METRICS]
    fmt["row_counts"] = [m.name for m in METRICS if m.kind == "rows" and m.printed]
    fmt["metrics"] = [name for name in SIZING_METRIC_NAMES if name in PRINTED_METRICS]
    return fmt


@cache
def vendor_format(slug):
    path = HERE / "vendors" / f"{slug}.yaml"
    if not path.is_file():
        raise DraftError(f"unknown vendor {slug!r} (known: {', '.join(known_vendors())})")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def known_vendors():
    return sorted(p.stem for p in (HERE / "vendors").glob("*.yaml"))


@cache
def vendor_families(slug):
    """(Chinese name, family slug) of the vendor's families, longest name first (鲲鹏通用增强型 before 通用型)."""
    data = yaml.safe_load(VOCABULARY_FILE.read_text(encoding="utf-8"))
    pairs = [(f["name_zh"], f["slug"]) for f in data["families"] if f["vendor"] == slug and f.get("name_zh")]
    return sorted(pairs, key=lambda pair: -len(pair[0]))


# --- reading the text ---------------------------------------------------------------------------


@dataclass
class Mark:
    line: int
    where: str
    field: str
    reason: str

    def as_dict(self):
        return {"line": str(self.line), "where": self.where, "field": self.field, "reason": self.reason}


@dataclass
class Context:
    headings: list = field(default_factory=list)  # [(number, title, line)], outermost first
    subheading: str = ""  # the last short unnumbered line since the innermost heading
    prose: list = field(default_factory=list)  # (line, text) since the innermost heading


@dataclass
class TextTable:
    header_line: int
    header: list
    columns: list  # column name per header cell (None: not a results column)
    label: str | None
    label_line: int | None
    context: Context
    rows: list = field(default_factory=list)  # [(line, cells)]


def _normalise(cell):
    cell = re.sub(r"<br\s*/?>", "", cell).replace("（", "(").replace("）", ")")
    return re.sub(r"\s+", "", cell).upper()


def header_column(cell):
    norm = _normalise(cell)
    for keyword, name in formats()["headers"]:
        if _normalise(keyword) in norm:
            return name
    return None


def _cells(line):
    stripped = line.strip()
    if stripped.startswith("|"):
        inner = stripped[1:-1] if stripped.endswith("|") and len(stripped) > 1 else stripped[1:]
        return [cell.strip() for cell in inner.split("|")]
    if "\t" in line:
        return [cell.strip() for cell in line.rstrip("\n").split("\t")]
    return None


def _is_results_header(columns):
    return any(c in formats()["metrics"] for c in columns) and len([c for c in columns if c]) >= 3


def _looks_numeric(cell):
    return bool(ROWS_RE.match(cell)) or bool(re.match(formats()["spec"], cell))


def read_tables(text, vendor):
    """The results tables of the text, in order, each with its label and the headings above it."""
    fmt, vfmt = formats(), vendor_format(vendor)
    heading_re, label_re = re.compile(fmt["heading"]), re.compile(vfmt["label"]) if vfmt.get("label") else None
    ignore = [re.compile(p) for p in fmt["ignore"]]
    tables, context = [], Context()
    current, is_open, pending = None, False, None  # pending label: (text, line)

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n")  # a trailing tab is an empty last cell
        if not line.strip():
            continue
        if any(p.search(line) for p in ignore):
            current, is_open = None, False
            continue
        cells = _cells(line)
        non_empty = [c for c in (cells or [line.strip()]) if c]
        if len(non_empty) == 1 and label_re and label_re.match(re.sub(r"\s+", " ", non_empty[0])):
            current, is_open = None, False
            pending = (re.sub(r"\s+", " ", non_empty[0]).strip(), lineno)
            continue
        if cells is None or len(non_empty) == 1:  # prose, a heading or a one-cell line ("须知\t\t"): ends a table
            current, is_open = None, False
            text_line = non_empty[0] if non_empty else ""
            match = heading_re.match(text_line) if "...." not in text_line else None
            if match and not re.search(r"[。，,；;：:]", match["title"]):
                number = match["number"]
                # a heading's ancestors are the headings whose number prefixes it (a garbled chapter
                # heading must not leave the previous chapter's engine in force)
                context = Context(
                    headings=[h for h in context.headings if number.startswith(h[0] + ".")]
                    + [(number, re.sub(r"\s+", " ", match["title"]).strip(), lineno)])
                pending = None
                continue
            if len(text_line) <= 20 and not text_line.startswith(("图", "表")):
                context.subheading = text_line.lstrip("#* ").strip()
            context.prose.append((lineno, text_line))
            continue
        if MARKDOWN_SEPARATOR_RE.match(line.strip()):
            continue
        columns = [header_column(c) for c in cells]
        numeric = [c for c in cells if _looks_numeric(c)]
        if not numeric and _is_results_header(columns):
            if is_open and current is not None and columns == current.columns and pending is None:
                continue  # the header repeated after a page break: the same table goes on
            label, label_line = pending if pending else (None, None)
            current = TextTable(lineno, cells, columns, label, label_line,
                                Context(list(context.headings), context.subheading, list(context.prose)))
            tables.append(current)
            pending, is_open = None, True
            continue
        if current is not None and numeric:
            current.rows.append((lineno, cells))
            is_open = True
            continue
        current, is_open = None, False  # any other tab line ("须知\t\t", a contents entry): prose
    return [t for t in tables if t.rows]


# --- one table -> data file rows ----------------------------------------------------------------


def _engine_in(text):
    for pattern, slug in formats()["engines"]:
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            version = re.sub(r"\s+", " ", match.group(1)) if match.groups() and match.group(1) else ""
            return slug, version
    return None, ""


def _english(text):
    for chinese, english in formats()["english"]:
        text = text.replace(chinese, english)
    text = re.sub(r"\s+", " ", text).strip()
    return "" if CJK_RE.search(text) else text


def _family_in(text, vendor):
    for name, slug in vendor_families(vendor):
        if name in text:
            return slug
    return None


class Drafter:
    def __init__(self, text, vendor, source_file=""):
        self.text, self.vendor, self.source_file = text, vendor, source_file
        self.lines = text.splitlines()
        self.fmt, self.vfmt = formats(), vendor_format(vendor)
        self.marks: list[Mark] = []

    def mark(self, line, where, field_name, reason):
        self.marks.append(Mark(line or 0, where, field_name, reason))

    # the cover -----------------------------------------------------------------------------------
    def document(self):
        cover = self.vfmt["document"]
        head = self.lines[:80]
        published, edition, title, title_line = None, "", "", None
        for lineno, line in enumerate(head, start=1):
            if published is None and (m := re.match(cover["published"], line.strip())):
                published = f"{m[1]}-{m[2]}-{m[3]}"
            if cover.get("edition") and not edition and (m := re.match(cover["edition"], line.strip())):
                edition, title_line = m[1], title_line or lineno
            if cover.get("title_line") and not title and (m := re.match(cover["title_line"], line.strip())):
                title = m[1]
        if published is None:
            raise DraftError(f"not a whitepaper: no publication date on the cover (first 80 lines; "
                             f"expected a line like {cover['published']!r})", 1)
        if not title:
            stop = title_line or next((i for i, l in enumerate(head, start=1) if re.match(cover["published"], l.strip())), 1)
            title = " ".join(l.strip() for l in head[: stop - 1] if l.strip())
        if not edition:
            self.mark(1, "document", "edition", "the cover prints no edition number: left empty")
        topic = next((slug for words, slug in cover["topic"] if words in title), cover["default_topic"])
        title_en = title
        for chinese, english in cover.get("title_en_words", []):
            title_en = title_en.replace(chinese, english)
        if CJK_RE.search(title_en):
            self.mark(1, "document", "title_en", "no English title in the vendor's words: write one")
            title_en = ""
        return {"slug": f"{self.vendor}-{published}-{topic}", "vendor": self.vendor, "title": title,
                "title_en": title_en, "edition": edition, "published": published, "language": "zh-hans",
                "source_file": self.source_file,
                "notes": "Drafted by manage.py draft_whitepaper from the extracted text; reviewed: no."}

    # tables ---------------------------------------------------------------------------------------
    def table_meta(self, table, index, tables):
        where = f"table at line {table.header_line}"
        headings = table.context.headings
        section = f"{headings[-1][0]} {headings[-1][1]}" if headings else ""
        engine, version, heading = None, "", ""
        for number, title, _ in reversed(headings):
            found, found_version = _engine_in(title)
            if found:
                engine, version = found, found_version
                heading = "" if f"{number} {title}" == section else f"{number} {title}"
                break
        if engine is None or not version:  # the headings do not say: the section's prose may
            for lineno, line in table.context.prose:
                found, found_version = _engine_in(line)
                if found and (engine in (None, found)) and found_version:
                    engine, version = found, found_version
                    self.mark(lineno, where, "version", f"engine version read from the prose ({line[:60]!r}), "
                                                       "not from a heading: check it")
                    break
        if engine and not version and self.vfmt.get("version_in_prose"):
            chapter = headings[0][2] if headings else 1
            for lineno in range(chapter, table.header_line):
                if m := re.search(self.vfmt["version_in_prose"], self.lines[lineno - 1]):
                    version = m[1]
                    self.mark(lineno, where, "version", f"engine version taken from the test steps "
                                                       f"({m[0]!r}): the document names no version for its results")
                    break
        if engine is None:
            raise DraftError("no heading above this table names the engine (MySQL, PostgreSQL, SQL Server, PPAS)",
                             table.header_line)
        if not version and "instance_class" not in table.columns:  # else each row's instance class names it
            self.mark(table.header_line, where, "version", "no engine version printed: left empty")

        label, printed = table.label, True
        if label is None:
            printed = False
            label = self.missing_label(table, index, tables)
        family = None
        if engine not in self.fmt["no_family"]:
            for text in (label if printed else "", section, table.context.subheading, *[h[1] for h in reversed(headings)]):
                if text and (family := _family_in(text, self.vendor)):
                    break
        ratio = ""
        # a label inferred from its neighbours carries the rows' ratio (and is marked for review)
        if self.vfmt.get("label_ratio") and (m := re.search(self.vfmt["label_ratio"], label)):
            ratio = m[1]
        return {"label": label, "printed": printed, "section": section, "heading": heading, "engine": engine,
                "version": version, "family": family, "memory_ratio": ratio}

    def missing_label(self, table, index, tables):
        where = f"table at line {table.header_line}"
        template, label_re = self.vfmt.get("missing_label"), self.vfmt.get("label")
        before = next((t for t in reversed(tables[:index]) if t.label), None)
        after = next((t for t in tables[index + 1:] if t.label), None)
        if template and label_re and before and after:
            b, a = re.match(label_re, before.label), re.match(label_re, after.label)
            if b and a and b["chapter"] == a["chapter"] and int(a["number"]) == int(b["number"]) + 2:
                ratio = self.rows_ratio(table)
                if ratio:
                    label = template.format(chapter=b["chapter"], number=int(b["number"]) + 1, ratio=ratio)
                    self.mark(table.header_line, where, "label",
                              f"no label printed: {label!r} inferred from the labels around it "
                              f"({before.label!r}, {after.label!r}) and the rows' memory:vCPU ratio; check it")
                    return label
        headings = table.context.headings
        section = f"{headings[-1][0]} {headings[-1][1]}" if headings else f"line {table.header_line}"
        chapter = re.sub(r"^\d+(?:\.\d+)*\s*", "", headings[0][1]) if headings else ""
        label = f"{section} {table.context.subheading or chapter}".strip()
        self.mark(table.header_line, where, "label", f"no label printed: named {label!r} after its section; check it")
        return label

    @staticmethod
    def rows_ratio(table):
        cpu, mem = table.columns.index("vcpus") if "vcpus" in table.columns else None, \
            table.columns.index("memory_gb") if "memory_gb" in table.columns else None
        if cpu is None or mem is None:
            return ""
        ratios = set()
        for _, cells in table.rows:
            try:
                ratios.add(int(cells[mem]) / int(cells[cpu]))
            except (ValueError, IndexError, ZeroDivisionError):
                return ""
        ratio = ratios.pop() if len(ratios) == 1 else None
        return f"1:{int(ratio)}" if ratio and ratio == int(ratio) else ""

    def table_rows(self, table, meta):
        """The rows as data file cells, column names, and whether IOPS refers to the disk."""
        fmt = self.fmt
        where = f"table {meta['label']!r}"
        columns = table.columns
        has = set(filter(None, columns))
        if not ({"vcpus", "memory_gb"} <= has or "spec" in has):
            missing = [c for c in ("vcpus", "memory_gb") if c not in has]
            raise DraftError(f"the table's header has no {' and no '.join(missing)} column "
                             f"(header: {' | '.join(table.header)})", table.header_line)
        iops = columns.index("iops") if "iops" in columns else None
        iops_note = iops is not None and any(
            len(cells) > iops and cells[iops] and not NUMBER_RE.match(cells[iops]) for _, cells in table.rows)
        out_columns = []
        for name in columns:
            if name == "spec":
                out_columns += ["flavor", "vcpus", "memory_gb", "storage"]
            elif name == "instance_class":
                out_columns += ["version", "edition"]
            elif name:
                out_columns.append(name)
        rows, previous = [], {}
        for lineno, cells in table.rows:
            if len(cells) > len(columns) and any(cells[len(columns):]):
                raise DraftError(f"{len(cells)} cells but the header (line {table.header_line}) has "
                                 f"{len(columns)} columns: a cell is out of place", lineno)
            if len(cells) < len(columns):  # a dropped cell would shift every value after it into the wrong column
                raise DraftError(f"{len(cells)} cells but the header (line {table.header_line}) has "
                                 f"{len(columns)} columns: a cell is missing", lineno)
            values = {}
            for index, name in enumerate(columns):
                cell = cells[index] if index < len(cells) else ""
                if name is None:
                    continue
                if name == "spec":
                    values.update(self.spec_cell(cell, lineno, where))
                elif name == "iops" and iops_note:
                    if NUMBER_RE.match(cell):
                        raise DraftError(f"IOPS {cell!r} in a column whose cells are the note about the disk", lineno)
                    values["iops"] = "disk"
                elif name in fmt["numbers"]:
                    pattern = ROWS_RE if name in fmt["row_counts"] else NUMBER_RE
                    if pattern.match(cell):
                        values[name] = cell
                    elif name in ("vcpus", "memory_gb"):
                        raise DraftError(f"{name}: {cell!r} is not a number", lineno)
                    else:
                        values[name] = ""
                        if cell:
                            self.mark(lineno, where, name, f"cell {cell!r} is not a number: left empty")
                else:  # text columns
                    if cell and ROWS_RE.match(cell):
                        raise DraftError(f"a number ({cell!r}) in the {table.header[index]!r} column", lineno)
                    if not cell and name in fmt["merged"]:
                        cell = previous.get(name, "")
                    values[name] = cell
            previous = dict(values)  # as printed, for the merged cells below
            rows.append((lineno, self.text_cells(values, lineno, where)))
        return out_columns, rows

    def spec_cell(self, cell, lineno, where):
        m = re.match(self.fmt["spec"], cell)
        if not m:
            raise DraftError(f"spec cell {cell!r} is not code, cores, memory and storage", lineno)
        if not m["sep"]:  # "ppas.x8.4xlarge.232核…": the code's last digit and the cores run together
            self.mark(lineno, where, "flavor", f"spec cell {cell!r} prints the code and the cores together: "
                                               f"read as {m['flavor']!r} and {m['vcpus']} cores; check it")
        return {"flavor": m["flavor"], "vcpus": m["vcpus"], "memory_gb": m["memory_gb"],
                "storage": re.sub(r"\s+", "", m["storage"])}

    def text_cells(self, values, lineno, where):
        if "deployment" in values:
            printed = values["deployment"]
            values["deployment"] = next((slug for word, slug in self.fmt["deployments"] if word in printed), "")
            if printed and not values["deployment"]:
                self.mark(lineno, where, "deployment", f"deployment {printed!r} not recognised: left empty")
        if "instance_class" in values:
            printed = values.pop("instance_class")
            versions = []
            for match in re.findall(r"\d{4}(?:\s*R2)?", printed):
                if (v := re.sub(r"\s+", " ", match)) not in versions:
                    versions.append(v)
            upper = printed.upper()
            editions = sorted((upper.find(w), slug) for w, slug in self.fmt["editions"] if w in upper)
            values["version"], values["edition"] = "+".join(versions), "+".join(s for _, s in editions)
            if len(versions) != 1:
                self.mark(lineno, where, "version", f"instance class {printed!r} names {len(versions)} versions")
        return values

    # the whole document ---------------------------------------------------------------------------
    def draft(self):
        document = self.document()
        tables = read_tables(self.text, self.vendor)
        if not tables:
            raise DraftError("not a whitepaper: no results table (a header with CPU, memory and TPS/QPS/TPM "
                             "columns followed by rows of numbers) in the text", 1)
        out_tables, methodologies = [], {}
        for index, table in enumerate(tables):
            meta = self.table_meta(table, index, tables)
            columns, rows = self.table_rows(table, meta)
            family_column = self.families(meta, rows, table)
            methodology = self.methodology(document, meta, table, methodologies)
            entry = {"label": meta["label"], "label_en": _english(meta["label"]),
                     "label_printed": "true" if meta["printed"] else "false",
                     "section": meta["section"], "section_en": _english(meta["section"])}
            if meta["heading"]:
                entry.update(heading=meta["heading"], heading_en=_english(meta["heading"]))
            entry.update(engine=meta["engine"], version=meta["version"], family=meta["family"] or "",
                         memory_ratio=meta["memory_ratio"], methodology=methodology,
                         notes=f"Drafted from the text, lines {table.header_line}-{table.rows[-1][0]}.")
            if family_column:
                columns = columns + ["family"]
            if not meta["memory_ratio"] and self.vfmt.get("ratio_from_flavor_suffix") and "flavor" in columns:
                ratios = {self.flavor_ratio(r.get("flavor", "")) for _, r in rows}
                if len(ratios) == 1 and None not in ratios:
                    entry["memory_ratio"] = ratios.pop()
                    self.mark(table.header_line, f"table {meta['label']!r}", "memory_ratio",
                              f"memory ratio {entry['memory_ratio']} implied by the spec codes' suffix, not printed")
            entry["columns"] = columns
            entry["rows"] = [[r.get(c, "") for c in columns] for _, r in rows]
            out_tables.append(entry)
        seen = {}
        for entry in out_tables:
            if entry["label"] in seen:
                raise DraftError(f"two tables have the label {entry['label']!r}", None)
            seen[entry["label"]] = True
        return {"document": document, "methodologies": list(methodologies.values()), "tables": out_tables,
                "review": [m.as_dict() for m in self.marks]}

    def flavor_ratio(self, flavor):
        m = re.match(self.vfmt["ratio_from_flavor_suffix"], flavor)
        return f"1:{m[1]}" if m else None

    def families(self, meta, rows, table):
        """Set the table's family, or return True when each row says its own (from the spec code)."""
        if meta["family"] or meta["engine"] in self.fmt["no_family"]:
            return False
        by_code = self.vfmt.get("flavor_families", [])
        found = []
        for lineno, values in rows:
            family = next((slug for pattern, slug in by_code if re.search(pattern, values.get("flavor", ""))), "")
            if not family:
                self.mark(lineno, f"table {meta['label']!r}", "family",
                          "no heading names the instance family and the spec code does not tell it: left empty")
            values["family"] = family
            found.append(family)
        if len(set(found)) == 1:
            meta["family"] = found[0]
            return False
        self.mark(table.header_line, f"table {meta['label']!r}", "family",
                  "family per row from the spec code (vendor rule flavor_families): check it")
        return True

    def methodology(self, document, meta, table, methodologies):
        """One methodology per engine and tool; the tool is the one the chapter's test method names."""
        chapter_line = table.context.headings[0][2] if table.context.headings else 1
        tool, version = "", ""
        # the chapter's own test method, else the document's (a "1 测试方法" chapter before the results)
        for start in (chapter_line, 1):
            chapter = "\n".join(self.lines[start - 1: table.header_line])
            for word, slug in self.fmt["tools"]:
                if re.search(word, chapter, re.IGNORECASE):
                    tool = slug
                    if m := re.search(self.fmt["tool_version"].format(tool=word), chapter):
                        version = m[1]
                    break
            if tool:
                break
        slug = f"{document['slug']}-{meta['engine']}" + (f"-{tool}" if tool else "")
        if slug not in methodologies:
            where = f"methodology {slug}"
            if not tool:
                self.mark(table.header_line, where, "tool", "the chapter names no test tool: left empty")
            self.mark(chapter_line, where, "parameters",
                      "threads, client, workload, parameters and description are not drafted: write them "
                      "from the test method")
            methodologies[slug] = {
                "slug": slug, "name": f"{tool or 'test'} {meta['engine']}".strip(), "tool": tool,
                "tool_version": version,
                **self.command_numbers(chapter_line, table.header_line, where),
                "statements_per_transaction": self.vfmt.get("statements_per_transaction", {}).get(tool, ""),
            }
        return slug


    def command_numbers(self, first_line, last_line, where):
        """Numbers the chapter's command lines print (--oltp-tables-count=64 ...), as printed."""
        chapter = "\n".join(self.lines[first_line - 1: last_line])
        numbers = {}
        for name, pattern in self.fmt["methodology_numbers"].items():
            found = sorted(set(re.findall(pattern, chapter)), key=int)
            numbers[name] = found[0] if len(found) == 1 else ""
            if len(found) > 1:
                self.mark(first_line, where, name, f"the commands print {', '.join(found)}: left empty, pick the run's")
        return numbers


def draft_text(text, vendor=None, source_file=""):
    """The draft data file of a whitepaper's text, as a dict (review marks under `review`)."""
    vendor = vendor or detect_vendor(text)
    return Drafter(text, vendor, source_file).draft()


def detect_vendor(text):
    head = "\n".join(text.splitlines()[:60])
    for slug in known_vendors():
        if any(word in head for word in vendor_format(slug)["detect"]):
            return slug
    raise DraftError(f"not a whitepaper of a known vendor: none of {', '.join(known_vendors())} is named in the "
                     "first 60 lines (give --vendor)", 1)


class _Dumper(yaml.SafeDumper):
    pass


def _flow_rows(dumper, data):
    flow = all(isinstance(v, str) for v in data) and len(data) > 0
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _flow_rows)


def dump(data):
    """The draft as YAML text: every value a string, rows one a line."""
    return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=120)
