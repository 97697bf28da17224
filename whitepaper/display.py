"""The catalogue's own text in the reader's language: one definition of what a Chinese page and an
English page show for a vendor, document, family, methodology, table, date and number.

The documents print Chinese: Chinese pages show it as printed. English pages show the English
rendering (title_en, label_en, section_en, the family's and vendor's English name) and keep the
printed Chinese visible beside it where it is a citation (table labels, sections, titles, families),
marked `lang="zh-Hans"`. Row counts printed with 亿/万 stay as printed in Chinese pages and are
numbers in English pages. Numbers otherwise stay exactly as printed (843.00 is 843.00) in both."""

import re

from django.utils import formats, translation
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from .choices import NOT_STATED_MARK, Deployment
from .metrics import METRICS_BY_NAME
from .queries import version_sort_key

EDITIONS = {"enterprise": _("Enterprise"), "standard": _("Standard"), "web": _("Web")}


# The methodologies' free-form parameters (data files: `parameters`), named for the reader in either language.
PARAMETER_LABELS = {
    "applies_to": _("Applies to"),
    "availability_zone": _("Availability zone"),
    "benchmark": _("Benchmark"),
    "build": _("Build"),
    "client_cores": _("Client cores"),
    "client_hosts": _("Client hosts"),
    "duration_s": _("Duration (s)"),
    "jobs": _("Jobs (-j)"),
    "prepared": _("Prepared statements"),
    "report_interval_s": _("Report interval (s)"),
    "round_trip_ms": _("Client-to-target round trip (ms, median)"),
    "rows_per_table": _("Rows per table"),
    "tables": _("Tables"),
    "thread_sweep": _("Thread sweep"),
    "threads": _("Threads"),
    "tls": _("TLS"),
    "tool": _("Tool"),
    "warmup_s": _("Warm-up (s)"),
    "workload": _("Workload"),
    "cleanup_threads": _("Clean-up threads"),
    "clients_and_jobs": _("Clients and jobs (-c / -j)"),
    "database": _("Database"),
    "db_driver": _("Database driver"),
    "forced_shutdown": _("Forced shutdown (s)"),
    "install": _("Installation"),
    "max_requests": _("Maximum requests (0: no limit)"),
    "other_flags": _("Other options"),
    "port": _("Port"),
    "prepare_threads": _("Data preparation threads"),
    "protocol": _("Query protocol"),
    "range": _("Hot data range (-D range)"),
    "region": _("Region"),
    "scale": _("Scale factor"),
    "schema": _("Schema"),
    "schema_database": _("Schema database"),
    "scripts": _("Custom scripts"),
    "server_version": _("Server version"),
    "show_output": _("Show output"),
    "test_script": _("Test script"),
    "virtual_users": _("Virtual users"),
}


def parameter_label(key):
    """A parameter's name for the reader; a key without a label reads as words, never as `snake_case`."""
    return PARAMETER_LABELS.get(key) or key.replace("_", " ").capitalize()


def methodology_parameters(methodology):
    """[(label, value, written_in_chinese)] in the data file's order: the Chinese value on Chinese pages
    where the data file gives one (`parameters_zh`), else the value as written (numbers, commands)."""
    chinese_values = methodology.parameters_zh or {}
    return [(parameter_label(key), chinese_values[key], True) if chinese() and chinese_values.get(key)
            else (parameter_label(key), value, False) for key, value in (methodology.parameters or {}).items()]


def inferred_sources(methodology):
    """{field: where its value comes from} for the set-up values the transcription inferred (Methodology.inferred),
    in the page's language."""
    chinese_sources = methodology.inferred_zh or {}
    return {key: chinese_sources.get(key) if chinese() and chinese_sources.get(key) else source
            for key, source in (methodology.inferred or {}).items()}


def chinese():
    return (translation.get_language() or "").startswith("zh")


def printed(text):
    """Printed Chinese kept visible as the citation (marked, so readers and tests know it is a quote)."""
    return format_html('<span lang="zh-Hans" class="printed">{}</span>', text) if text else ""


def bilingual(english, chinese_text):
    """English page: `English (printed)`; Chinese page: as printed. Either side may be missing."""
    if chinese():
        return chinese_text or english
    if english and chinese_text and english != chinese_text:
        return format_html('{} <span lang="zh-Hans" class="printed">({})</span>', english, chinese_text)
    return english or printed(chinese_text)


def plain(english, chinese_text):
    """The same choice as text only (select options, chart legends, page titles)."""
    if chinese():
        return chinese_text or english
    return english or chinese_text


def vendor_name(vendor):
    return plain(vendor.name, vendor.name_zh)


def document_title(document):
    return plain(document.title_en, document.title)


_TITLE_NOISE = re.compile(r"^(云数据库|Cloud Database|ApsaraDB)\s*|\s*(性能白皮书|Performance Whitepaper)$")


def document_short_title(document):
    """Date and short name for dense lists: "2025-10-21 RDS for MySQL" (the vendor is shown beside it;
    the full title goes on hover)."""
    return f"{document.published:%Y-%m-%d} {_TITLE_NOISE.sub('', document_title(document)) or document_title(document)}"


def covers(engine_names):
    """What a document covers beside its printed title: "covers MySQL, PostgreSQL, PPAS" where it covers more than
    one engine (its title may name one), '' otherwise."""
    if len(engine_names) < 2:
        return ""
    return _("covers %(engines)s") % {"engines": translation.pgettext("list separator", ", ").join(sorted(engine_names))}


def family_name(family):
    """'' when the document states no family."""
    return "" if family is None else plain(family.name, family.name_zh)


def family_html(family):
    return "" if family is None else bilingual(family.name, family.name_zh)


def methodology_name(methodology):
    return plain(methodology.name, methodology.name_zh)


def methodology_text(methodology, field):
    """workload, client or description in the page's language: (text, written_in_chinese), Methodology.text."""
    return methodology.text(field)


def table_label(table):
    return plain(table.label_en, table.label)


def table_label_html(table):
    return bilingual(table.label_en, table.label)


def section_title(table):
    return plain(table.section_en, table.section)


def section_html(table):
    return bilingual(table.section_en, table.section)


def heading_text(table):
    """The engine heading as text only (the contents' compact lines)."""
    return plain(table.heading_en, table.heading)


def heading_html(table):
    """The engine heading above a table's section ("1.2 RDS for MySQL 5.6 测试数据"), '' when none."""
    return bilingual(table.heading_en, table.heading)


def edition_name(edition):
    """SQL Server editions ('enterprise+standard') in the reader's language."""
    return " + ".join(str(EDITIONS.get(e, e)) for e in edition.split("+") if e)


def deployment_name(deployment):
    """ha / single in the reader's language."""
    return str(Deployment(deployment).label) if deployment else ""


def row_count(value):
    """A row count as the documents write it in Chinese pages (1亿, 5000万), a whole number in English pages."""
    if value is None:
        return ""
    if chinese():
        for unit, size in (("亿", 10**8), ("万", 10**4)):
            if value >= size and value % (size // 10) == 0:
                return f"{value / size:g}{unit}"
    return formats.number_format(value, force_grouping=True)


def date(value):
    """A document's date: 2023年8月3日 / Aug. 3, 2023."""
    return formats.date_format(value, "DATE_FORMAT") if value else ""


def metric_shown(result, name):
    """A metric as printed; in English pages, 亿/万 row counts as whole numbers (12.5亿 -> 1,250,000,000)."""
    metric = METRICS_BY_NAME.get(name)
    value = getattr(result, name, None)
    if metric is not None and metric.kind == "rows" and value is not None and not chinese():
        return formats.number_format(value, force_grouping=True)
    return result.display(name)


def data_size(result):
    """The data size a figure was measured at: the row's hot rows (Alibaba's PostgreSQL and PPAS tables vary
    it row by row), else its test rows, else its methodology's tables x rows per table."""
    if result.hot_rows is not None:
        return _("%(rows)s hot rows") % {"rows": metric_shown(result, "hot_rows")}
    if result.data_rows is not None:
        return _("%(rows)s rows of test data") % {"rows": metric_shown(result, "data_rows")}
    methodology = result.table.methodology
    if methodology.tables and methodology.rows_per_table:
        return _("%(tables)s tables × %(rows)s rows") % {
            "tables": methodology.tables, "rows": formats.number_format(methodology.rows_per_table, force_grouping=True)}
    return ""


def data_sizes(answers):
    """[(data size, how many answers)] when the answers were measured on different data sizes (data_size:
    hot rows, rows of test data, or tables x rows), [] when on one: a figure on ten times less data is no like
    figure (Huawei's 2018 MySQL runs: 8 tables x 1,000,000 rows; 2023: 64 x 10,000,000)."""
    counts = {}
    for r in answers:
        size = data_size(r) or str(_("not stated"))
        counts[size] = counts.get(size, 0) + 1
    return list(counts.items()) if len(counts) > 1 else []


def same_in(documents):
    """Editions printing the same numbers: "same in 2023 and 2025" (years; dates where a year repeats)."""
    years = [str(d.published.year) for d in documents]
    names = years if len(set(years)) == len(years) else [date(d.published) for d in documents]
    return _("same in %(older)s and %(newer)s") % {
        "older": translation.pgettext("list separator", ", ").join(names[:-1]), "newer": names[-1]}


def memory_ratio_text(flavor):
    """The memory ratio as the document groups it, or the one derived from vCPUs and memory, said so."""
    if not flavor.ratio_is_derived:
        return flavor.memory_ratio
    return _("%(ratio)s (derived)") % {"ratio": flavor.ratio}


def memory_ratio_html(flavor):
    if not flavor.ratio_is_derived:
        return flavor.memory_ratio
    return format_html('<span class="derived" title="{}">{}</span>', _("Derived from vCPUs and memory: the document "
                       "groups these flavours by no ratio."), memory_ratio_text(flavor))


def revised_from(result):
    """What an older edition printed otherwise (`result.revised_from`, editions.revisions), one phrase per
    metric: "TPS revised from 10929.30 in 2023, -19.1 %"; empty when the row was not revised."""
    revision = getattr(result, "revised_from", None)
    if revision is None:
        return ""
    year = revision.document.published.year
    parts = []
    for metric, old, _new, pct in revision.changes:
        label = METRICS_BY_NAME[metric].label
        if pct is None:  # printed in one edition only
            parts.append(_("%(metric)s %(old)s in %(year)s") % {
                "metric": label, "old": metric_shown(revision.older, metric) if old is not None else NOT_STATED_MARK, "year": year})
        else:
            parts.append(f"{label} " + _("revised from %(old)s in %(year)s, %(pct)s %%") % {
                "old": metric_shown(revision.older, metric), "year": year, "pct": f"{pct:+.1f}"})
    return "; ".join(parts)


def superseded(result):
    """What the newest later edition printed otherwise (`result.superseded`, editions.superseded), one phrase per
    metric: "the 2025 edition prints TPS 8839.4, -19.1 %"; empty when no later edition printed it otherwise."""
    newer = getattr(result, "superseded", None)
    if newer is None:
        return ""
    year = newer.document.published.year
    parts = []
    for metric, _old, new, pct in newer.changes:
        label = METRICS_BY_NAME[metric].label
        value = metric_shown(newer.newer, metric) if new is not None else NOT_STATED_MARK
        parts.append(f"{label} {value}" + (f", {pct:+.1f} %" if pct is not None else ""))
    return _("the %(year)s edition prints %(changes)s") % {"year": year, "changes": "; ".join(parts)}


def superseded_cell(result, metric):
    """One metric's newer figure beside the printed one in a document's table: "2025 edition: 8839.4, -19.1 %"."""
    newer = getattr(result, "superseded", None)
    for name, _old, new, pct in (newer.changes if newer else []):
        if name == metric:
            value = metric_shown(newer.newer, metric) if new is not None else NOT_STATED_MARK
            at = {"year": newer.document.published.year, "value": value}
            if pct is None:
                return _("%(year)s edition: %(value)s") % at
            return _("%(year)s edition: %(value)s, %(pct)s %%") % {**at, "pct": f"{pct:+.1f}"}
    return ""


def facets(results, engine=None):
    """The values each filter can choose from among `results` (queries.facet_values), labelled and ordered in the
    reader's language: {"vendor": [(slug, label)], "document" (newest first), "engine", "version" (of `engine` when
    given, in version order), "family", "memory_ratio", "deployment", "edition", "hot_rows"; "example_versions"
    {"engine:version"}, "engine_versions" [(engine, name, [versions])], "document_covers" {slug: text}}."""
    values = results.facet_values()
    vendors = {v: plain(name, name_zh) for v, (name, name_zh) in values["vendors"].items()}
    covered = {d: covers(names) for d, names in values["covers"].items()}
    documents = {}
    for d, (published, title_en, title, vendor) in values["documents"].items():
        # A title may name one engine and the document cover others (Alibaba's "RDS for MySQL" has PPAS and
        # PostgreSQL chapters): the document's label says what it covers beside its printed title.
        label = _("%(vendor)s: %(title)s, %(date)s") % {
            "vendor": vendors[vendor], "title": plain(title_en, title) or d, "date": date(published)}
        documents[d] = (published, f"{label} ({covered[d]})" if covered[d] else label)
    engines = values["engines"]
    example = values["example_versions"]
    by_engine = {}
    for e, ver in values["versions"]:
        by_engine.setdefault(e, set()).add(ver)
    versions = {ver for e, ver in values["versions"] if not engine or e == engine}
    families = {f: plain(name, name_zh) for f, (name, name_zh) in values["families"].items()}
    return {
        "vendor": sorted(vendors.items(), key=lambda kv: kv[1]),
        "document": [(slug, label) for slug, (_date, label) in  # newest first (`queries.document_newness`)
                     sorted(documents.items(), key=lambda kv: (kv[1][0], kv[0]), reverse=True)],
        "engine": sorted(engines.items(), key=lambda kv: kv[1]),
        "version": [(v, _("%(version)s (example version)") % {"version": v} if engine and (engine, v) in example else v)
                    for v in sorted(versions, key=version_sort_key)],
        "example_versions": {f"{e}:{ver}" for e, ver in example},
        # Per engine (in the engines' order), its versions in version order: PostgreSQL 10 and PPAS 10 stay apart.
        "engine_versions": [(e, engines[e], sorted(by_engine.get(e, ()), key=version_sort_key))
                            for e, _name in sorted(engines.items(), key=lambda kv: kv[1])],
        "family": sorted(families.items(), key=lambda kv: kv[1]),
        "document_covers": covered,  # {document slug: "covers MySQL, PPAS, PostgreSQL" or ''}
        "memory_ratio": [(r, r) for r in sorted(values["memory_ratios"], key=lambda r: int(r.split(":")[1]))],
        "deployment": [(d, deployment_name(d)) for d in sorted(values["deployments"])],
        "edition": [(e, edition_name(e)) for e in sorted(values["editions"])],
        "hot_rows": [(str(n), row_count(n)) for n in sorted(values["hot_rows"])],
    }
