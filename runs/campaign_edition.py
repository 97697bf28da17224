"""A campaign's finished cells drafted as an edition of the catalogue, reviewed, published and retracted (issue 47.4-5).

The draft is a data file in the catalogue's own format (whitepaper/data/README.md), kept on the campaign when it is
drafted: what the reviewer read is what publishing imports (whitepaper.importer, the one loader), and the same file
downloaded and imported into a fresh catalogue gives the same rows. Its document is of the internal vendor (labelled
internal everywhere, as every row of that vendor is), in a series named by the campaign: its slug is
internal-<date>-<series>, so the drafting's own rule (whitepaper/drafting/review.py) finds the previous edition of
the same series. Laid out as the source documents are: one table per engine version, family and memory ratio (and
set-up, should two targets have run different ones), one row per flavour with its TPS and QPS, the mean of the cell's
counted runs (succeeded, undisturbed: runs/campaigns.py cells), and the series behind it (n, the runs' TPS, standard
deviation, coefficient of variation, 95 % interval) as the row's measurement."""

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils import translation
from django.utils.translation import gettext as _

from whitepaper.drafting.draft import dump
from whitepaper.drafting.review import edition_diff
from whitepaper.importer import DataFileError, import_files, parse_document_file
from whitepaper.internal import declared_ratio, retract_internal_document
from whitepaper.models import INTERNAL_VENDOR_SLUG, Document, InstanceFamily, PublishedResult
from whitepaper.queries import version_sort_key

from . import stats
from .access import short_version
from .campaigns import cells
from .models import Run
from .publish import measurement_setup, methodology_for, published_figures, setup_key
from .reproduce import ENGINE_NAMES, is_decisive, major_version, methodology_differences, run_engine

COLUMNS = ["vcpus", "memory_gb", "tps", "qps", "latency_p95_ms"]


def series_slug(campaign):
    """The series the campaign's editions belong to: its name, as a slug."""
    return slugify(campaign.name)[:50].strip("-") or f"campaign-{campaign.pk}"


def document_slug(campaign, day):
    return f"{INTERNAL_VENDOR_SLUG}-{day:%Y-%m-%d}-{series_slug(campaign)}"


def counted_runs(cell):
    """The runs a cell's figures are the mean of: its succeeded, undisturbed runs (the cell's series)."""
    return sorted((r for r in cell.rounds.values() if r.state == "succeeded" and not r.disturbed), key=lambda r: r.pk)


def _text(value):
    return "" if value is None else str(value)


@dataclass
class DraftCell:
    """One counted cell of the campaign: its target's declared size, its runs and what they measured."""

    cell: object
    runs: list
    figures: dict
    series: object
    engine: str
    version: str
    family: str
    setup: dict = field(default_factory=dict)

    @property
    def table_key(self):
        return (self.engine, self.version, self.family, declared_ratio(self.cell.vcpus, self.cell.memory_gb),
                setup_key(self.setup))


def draft_cells(campaign):
    """The campaign's cells that have a series, with what a row of them prints. Runs read in one query."""
    found = [c for c in cells(campaign) if c.series is not None]
    ids = [r.pk for c in found for r in counted_runs(c)]
    full = Run.objects.select_related("target", "profile").in_bulk(ids)
    families = set(InstanceFamily.objects.filter(vendor__slug=INTERNAL_VENDOR_SLUG).values_list("slug", flat=True))
    drafted = []
    for cell in found:
        runs = [full[r.pk] for r in counted_runs(cell)]
        first = runs[0]
        drafted.append(DraftCell(
            cell=cell, runs=runs, figures=published_figures(first, members=runs), series=cell.series,
            engine=first.target.engine, version=short_version(first.target.engine, first.server_version),
            # The target's family is free text: a table names a family only when it is one of the vocabulary's.
            family=cell.family if cell.family in families else "", setup=measurement_setup(first)))
    return drafted


def _measurement(series, runs):
    values = [r.summary["tps"] for r in runs]
    stdev = series.se * series.n ** 0.5 if series.se is not None else None
    return {"n": str(series.n), "tps_runs": [repr(float(v)) for v in values], "method": series.method,
            "stdev": _text(None if stdev is None else round(stdev, 4)), "cv": _text(None if series.cv is None else round(series.cv, 6)),
            "tps_ci_low": _text(None if series.low is None else round(series.low, 4)),
            "tps_ci_high": _text(None if series.high is None else round(series.high, 4)), **_flags(runs)}


def _flags(runs):
    """What a row's runs were flagged with, as a row published from one run keeps it (runs/publish.py measurement_of):
    client-bound when any of them was (the cause a shared host when any ran on one), the runs whose server saw other
    load (published only acknowledged: the acknowledgement is written in at publishing), and the first latency caveat.
    Only the flags there are: a row of clean runs carries client_bound "false" and nothing else."""
    bound = [r.client_bound for r in runs]
    flags = {"client_bound": "true" if any(bound) else "" if None in bound else "false"}
    causes = [r.client_bound_cause for r in runs if r.client_bound]
    if causes:
        flags["client_bound_cause"] = "shared_host" if "shared_host" in causes else causes[0]
    other = [str(r.pk) for r in runs if r.other_load]
    if other:
        flags |= {"other_load_runs": other, "other_load_acknowledged_by": ""}
    caveat = next((str(r.latency_caveat) for r in runs if r.latency_caveat), "")
    if caveat:
        flags["latency_caveat"] = caveat
    return flags


def other_load_runs(data):
    """The runs of a drafted edition whose server saw other load (their numbers, in row order): publishing the edition
    needs someone to acknowledge them, as publishing one such run does."""
    return [int(pk) for table in data.get("tables") or [] for m in table.get("measurements") or []
            for pk in m.get("other_load_runs") or []]


def acknowledged(data, user):
    """The draft with `user` as who acknowledged its rows' other load (what publishing imports when they do)."""
    who = user.get_username() if user else "(whoever publishes it)"
    return {**data, "tables": [{**t, "measurements": [{**m, "other_load_acknowledged_by": who} if m.get("other_load_runs")
                                                      else m for m in t["measurements"]]} if t.get("measurements") else t
                               for t in data.get("tables") or []]}


def _methodology(slug, first):
    m = methodology_for(first)
    description = "; ".join(f"{k}: {v}" for k, v in measurement_setup(first).items())
    return {"slug": slug, "name": m.name, "tool": m.tool, "tool_version": m.tool_version, "workload": m.workload,
            "tables": _text(m.tables), "rows_per_table": _text(m.rows_per_table), "threads": _text(m.threads),
            "duration_s": _text(m.duration_s), "report_interval_s": _text(m.report_interval_s), "client": m.client,
            "statements_per_transaction": _text(m.statements_per_transaction),
            "parameters": {k: _text(v) for k, v in m.parameters.items()},
            "description": f"Measured with this dashboard's benchmark runs, the set-up as it ran: {description}."}


def draft_data(campaign, drafted, day):
    """The edition as a data file (a dict of strings, as whitepaper/data files are read)."""
    slug = document_slug(campaign, day)
    groups = {}
    for d in sorted(drafted, key=lambda d: (d.table_key, d.cell.vcpus or 0, d.cell.memory_gb or 0)):
        groups.setdefault(d.table_key, []).append(d)
    setups_per_place = {}
    for key in groups:
        setups_per_place.setdefault(key[:4], []).append(key[4])
    methodologies, tables = {}, []
    for position, (key, members) in enumerate(groups.items(), start=1):
        engine, version, family, ratio, setup = key
        first = members[0].runs[0]
        methodology = f"{slug}-{setup}"[:100]
        methodologies.setdefault(methodology, _methodology(methodology, first))
        # MariaDB is filed under MySQL (runs/access.py short_version) and named as what it is.
        server = version if version.startswith("MariaDB ") else f"{ENGINE_NAMES.get(engine, engine)} {version}".strip()
        label = " · ".join(filter(None, [server, family or None,
                                         f"CPU:memory = {ratio}" if ratio else None, first.profile.name]))
        if len(setups_per_place[key[:4]]) > 1:
            label += f" · set-up {setup[:6]}"
        rows, measurements = [], []
        for d in members:
            rows.append([str(d.cell.vcpus), str(d.cell.memory_gb)] + [_text(d.figures.get(c)) for c in COLUMNS[2:]])
            measurements.append(_measurement(d.series, d.runs))
        tables.append({"label": label, "label_en": label, "section": campaign.name, "section_en": campaign.name,
                       "engine": engine, "version": version, "family": family, "memory_ratio": ratio,
                       "methodology": methodology, "columns": COLUMNS, "rows": rows, "measurements": measurements})
    return {"document": {
        "slug": slug, "vendor": INTERNAL_VENDOR_SLUG, "title": campaign.name, "title_en": "", "edition": "",
        "published": day.isoformat(), "language": "en", "source_file": f"campaign {campaign.pk}",
        "notes": (f"Internal measurements: campaign {campaign.name!r}, {len(drafted)} target(s), up to {campaign.repeats} "
                  "runs each; each row's TPS and QPS are the mean of its runs, with n and the 95 % interval over them. "
                  "Not a vendor's figures.")},
        "methodologies": list(methodologies.values()), "tables": tables}


def draft_tables(data):
    """The draft's tables for reading: each row's cells by column with its series (the `measurements` entry) and its
    methodology, as the review page shows them."""
    methodologies = {m["slug"]: m for m in data.get("methodologies") or []}
    tables = []
    for table in data.get("tables") or []:
        rows = [{**dict(zip(table["columns"], cells)), "series": measured}
                for cells, measured in zip(table["rows"], table.get("measurements") or [{}] * len(table["rows"]))]
        tables.append({**table, "rows": rows, "methodology": methodologies.get(table["methodology"])})
    return tables


class EditionError(ValidationError):
    """Drafting or publishing refused; the message says why."""


def draft_edition(campaign, user, day=None):
    """Draft the edition from the campaign's counted cells now and keep it on the campaign (replacing an earlier
    draft). Raises EditionError when no cell has a run to count."""
    # The data file is in English (document.language), its latency caveats too: read in English from the start (a
    # run's caveat is kept once read).
    with translation.override("en"):
        drafted = draft_cells(campaign)
        data = draft_data(campaign, drafted, day or timezone.localdate()) if drafted else None
    if not drafted:
        raise EditionError(_("No cell of campaign %(id)s has a succeeded run yet: there is nothing to draft.") % {
            "id": campaign.pk})
    try:
        parse_as_published(data)  # the importer's own checks, now rather than at publishing
    except DataFileError as exc:
        raise EditionError(_("The draft does not pass the catalogue's checks: %(why)s") % {"why": exc}) from None
    campaign.draft, campaign.drafted_at, campaign.drafted_by = data, timezone.now(), user
    campaign.save(update_fields=["draft", "drafted_at", "drafted_by"])
    return data


def parse_as_published(data):
    """The draft read by the importer (whitepaper.importer.parse_document_file) as publishing will import it: its rows'
    other load acknowledged, which the importer requires, by a placeholder (publishing names who did)."""
    with data_file(acknowledged(data, None)) as path:
        return parse_document_file(path)


class data_file:
    """The draft written as a temporary YAML file, for the importer (removed on exit)."""

    def __init__(self, data):
        self.text = dump(data)

    def __enter__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="perfdash-edition-")
        path = Path(self.dir.name) / "edition.yaml"
        path.write_text(self.text, encoding="utf-8")
        return path

    def __exit__(self, *exc):
        self.dir.cleanup()


def export_text(campaign):
    """The drafted edition as the data file a catalogue imports."""
    return dump(campaign.draft)


@transaction.atomic
def publish_edition(campaign, user, *, acknowledge_other_load=False):
    """Import the drafted edition (what the reviewer read) as a document of the catalogue, and link each row to the
    runs behind it on this dashboard (the row's record page). Raises EditionError, and nothing changes, when there is
    no draft or another document already has its slug; a ValidationError naming acknowledge_other_load when a row's
    runs saw other load on the server and `acknowledge_other_load` is not given (who acknowledged it, and when, is
    then kept on the rows and on the runs, as for one run published)."""
    if not campaign.draft:
        raise EditionError(_("Draft campaign %(id)s's edition first: publishing imports the draft you reviewed.") % {
            "id": campaign.pk})
    other = other_load_runs(campaign.draft)
    if other and not acknowledge_other_load:
        raise ValidationError({"acknowledge_other_load": [_(
            "The server saw other load during run(s) %(ids)s of this edition: acknowledge it to publish the edition "
            "anyway.") % {"ids": ", ".join(map(str, other))}]})
    slug = campaign.draft["document"]["slug"]
    taken = Document.objects.filter(slug=slug).exclude(pk=campaign.edition_id).exists()
    if taken:
        raise EditionError(_("A document %(slug)s is already in the catalogue (an edition of the same series drafted the "
                             "same day): retract it, or rename the campaign.") % {"slug": slug})
    if other:
        campaign.draft = acknowledged(campaign.draft, user)
        Run.objects.filter(pk__in=other).update(other_load_acknowledged_at=timezone.now(), other_load_acknowledged_by=user)
    with data_file(campaign.draft) as path:
        import_files([path])
    document = Document.objects.get(slug=slug)
    _link_runs(campaign, document)
    campaign.edition, campaign.published_at, campaign.published_by = document, timezone.now(), user
    campaign.save(update_fields=["draft", "edition", "published_at", "published_by"])
    return document


def _link_runs(campaign, document):
    """Each row's first counted run carries it (Run.published_result): the run's public record is the row's, as for a
    series published by hand. A run already published on its own keeps its own row."""
    by_size = {}
    for d in draft_cells(campaign):
        by_size[(d.cell.vcpus, d.cell.memory_gb, d.version)] = d.runs
    for row in PublishedResult.objects.filter(table__document=document).select_related("flavor", "engine_version"):
        runs = by_size.get((row.flavor.vcpus, row.flavor.memory_gb, row.engine_version.version)) or []
        if any(r.published_result_id == row.pk for r in runs):
            continue  # published again: the row kept its place and its link
        free = next((r for r in runs if r.published_result_id is None), None)
        if free is not None:
            Run.objects.filter(pk=free.pk).update(published_result=row)
            PublishedResult.objects.filter(pk=row.pk).update(measurement={**row.measurement, "run": free.pk})


@transaction.atomic
def retract_edition(campaign):
    """Take the whole edition out of the catalogue (its document, tables and rows); the draft stays."""
    if campaign.edition_id is None:
        raise EditionError(_("Campaign %(id)s has no published edition.") % {"id": campaign.pk})
    retract_internal_document(campaign.edition_id)
    campaign.edition, campaign.published_at, campaign.published_by = None, None, None
    campaign.save(update_fields=["edition", "published_at", "published_by"])


# --- the review: the previous edition of the series, and the reference document -----------------------------------

@dataclass
class Change:
    """A row of the edition diff with the verdict rule's word on a changed TPS (runs/stats.py compare, over the two
    editions' runs): a change only when it says faster or slower."""

    row: object
    comparison: object = None  # runs/stats.py Comparison (new against old); None when a side has fewer than 2 runs

    @property
    def verdict(self):
        return self.comparison.verdict if self.comparison else ""

    @property
    def is_change(self):
        return self.row.status == "changed" and self.verdict in (stats.FASTER, stats.SLOWER)


def _runs_tps(result):
    return [float(v) for v in ((result.measurement or {}).get("repeats") or {}).get("tps") or []]


def review(campaign):
    """(previous edition or None, [TableDiff with .changes: [Change]]) of the drafted edition."""
    parsed = parse_as_published(campaign.draft)
    previous, tables = edition_diff(parsed)
    new_runs = {}
    for table in parsed.tables:
        for row in table.rows:
            key = (row.values["version"], row.values["vcpus"], row.values["memory_gb"])
            new_runs[key] = (row.measurement.get("repeats") or {}).get("tps") or []
    for table in tables:
        table.changes = []
        for row in table.rows:
            comparison = None
            if row.status == "changed":
                old = _runs_tps(row.old)
                new = [float(v) for v in new_runs.get((row.new.engine_version.version, row.new.flavor.vcpus,
                                                       row.new.flavor.memory_gb)) or []]
                if len(old) >= 2 and len(new) >= 2:
                    comparison = stats.compare(old, [new])[0]
            table.changes.append(Change(row, comparison))
    return previous, tables


@dataclass
class ReferenceRow:
    """A flavour both measured: the reference document's printed TPS beside the cell's series, and what differs in
    the set-up (runs/reproduce.py methodology_differences, decisive ones marked)."""

    cell: object
    result: object
    printed_tps: str
    mean: float
    low: float | None
    high: float | None
    n: int
    ratio: float | None
    differences: list

    @property
    def decisive(self):
        return [d for d in self.differences if d.same is False and is_decisive(d.key)]


def reference_rows(campaign):
    """For every counted cell, the reference document's row it measures again (reference_row), with the comparison."""
    if campaign.reference_id is None:
        return []
    candidates = list(PublishedResult.objects.filter(table__document_id=campaign.reference_id, tps__isnull=False)
                      .select_related("flavor__family", "engine_version__engine", "table__methodology", "table__document")
                      .order_by("table__position", "position"))
    found = []
    for d in draft_cells(campaign):
        result = reference_row(d, candidates)
        if result is None:
            continue
        printed = (result.printed or {}).get("tps") or str(result.tps)
        found.append(ReferenceRow(
            cell=d.cell, result=result, printed_tps=printed, mean=d.series.mean, low=d.series.low, high=d.series.high,
            n=d.series.n, ratio=d.series.mean / float(result.tps) if result.tps else None,
            differences=methodology_differences(d.runs[0], result)))
    return found


def reference_row(drafted, candidates):
    """The one row of a reference document a cell measures again: the same engine, vCPUs and memory; of the cell's
    declared family when the document prints that family; of the engine version the cell's server runs when the
    document prints it, else of the document's newest version (the difference is then listed, as decisive); the first
    such row in document order. None when the document has no row of that engine and size."""
    rows = [r for r in candidates if (r.engine_version.engine.slug, r.flavor.vcpus, r.flavor.memory_gb) == (
        drafted.engine, drafted.cell.vcpus, drafted.cell.memory_gb)]
    same_family = [r for r in rows if r.flavor.family and r.flavor.family.slug == drafted.cell.family]
    rows = same_family or rows
    if not rows:
        return None
    measured = run_engine(drafted.runs[0])[1]
    same_version = [r for r in rows if r.engine_version.version == major_version(measured, r.engine_version.version)]
    if same_version:
        return same_version[0]
    newest = max(version_sort_key(r.engine_version.version) for r in rows)
    return next(r for r in rows if version_sort_key(r.engine_version.version) == newest)
