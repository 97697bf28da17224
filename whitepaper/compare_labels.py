"""A comparison (compare.py: the rules) named in the reader's language, for the compare page and
`/api/v1/compare/`: each selection (a series by what its parameters chose, a single row by what tells it from
the rows beside it), each line of a series by what differs between the lines, and the methodologies'
differences as the pages show them."""

from django.utils.translation import gettext as _

from . import compare, display
from .pages import family_name, origin_name
from .templatetags.catalogue import methodology_text

def describe_series(data, rows):
    """A readable name for a filter-defined series, from its first row."""
    if not rows:
        return " ".join(f"{k}={v}" for k, v in data.items())
    r = rows[0]
    parts = []
    if "vendor" in data:
        parts.append(display.vendor_name(r.table.document.vendor))
    if "document" in data:
        parts.append(f"{display.vendor_name(r.table.document.vendor)} {display.date(r.table.document.published)}")
    if "engine" in data or "version" in data:
        parts.append(str(r.engine_version) if "version" in data else r.engine_version.engine.name)
    if "family" in data:
        parts.append(family_name(r.flavor.family))
    if "memory_ratio" in data:
        parts.append(display.memory_ratio_text(r.flavor))
    if "deployment" in data:
        parts.append(r.get_deployment_display())
    if "edition" in data:
        parts.append(display.edition_name(r.edition))
    if "hot_rows" in data:
        parts.append(f"{_('hot rows')} {display.metric_shown(r, 'hot_rows')}")
    if any(row.is_internal for row in rows):
        parts.append(_("includes internal measurements"))
    return " · ".join(parts)


def line_labels(groups):
    """Each line's label (`groups`: the rows of each line of one selection, compare.part_key): what differs
    between the lines' first rows (vendor, engine version, family, memory ratio, deployment, edition, data size,
    year)."""
    shown = [(lambda r: display.vendor_name(r.table.document.vendor)),
             (lambda r: str(r.engine_version)),
             (lambda r: family_name(r.flavor.family)),
             display.memory_ratio_text,
             (lambda r: r.get_deployment_display() if r.deployment else ""),
             (lambda r: display.edition_name(r.edition) if r.edition else ""),
             (lambda r: f"{_('hot rows')} {display.metric_shown(r, 'hot_rows')}" if r.hot_rows else ""),
             (lambda r: str(r.table.document.published.year))]
    firsts = [group[0] for group in groups]
    varying = [len({f(r) if f is not display.memory_ratio_text else f(r.flavor) for r in firsts}) > 1 for f in shown]
    labels = []
    for r in firsts:
        names = [f(r.flavor) if f is display.memory_ratio_text else f(r) for f, varies in zip(shown, varying) if varies]
        labels.append(" · ".join(n for n in names if n) or "")
    return labels


def describe_result(r):
    """A single row's name: engine version, family, spec code or size, and what tells it from the rows beside it
    (SQL Server's deployment and edition, Alibaba's hot data), with its vendor and year."""
    spec = r.flavor.spec_code or f"{r.flavor.vcpus} vCPU / {r.flavor.memory_gb} GB"
    parts = [str(r.engine_version), family_name(r.flavor.family), spec,
             r.get_deployment_display() if r.deployment else "", display.edition_name(r.edition) if r.edition else "",
             f"{_('hot rows')} {display.metric_shown(r, 'hot_rows')}" if r.hot_rows else ""]
    label = " · ".join(p for p in parts if p) + f" ({display.vendor_name(r.table.document.vendor)} {r.table.document.published:%Y})"
    return f"{label} · {origin_name(r)}" if r.is_internal else label


NAMES = compare.Names(result=describe_result, series=describe_series, lines=line_labels)


def shown_differences(differences):
    """compare.methodology_differences as the pages show them: {"field", "label", "values" (as stated, in
    English), "shown" (in the reader's language: the tool's name, the client's text in the page's language)}."""
    shown = {"tool": lambda m: m.get_tool_display(), "client": lambda m: methodology_text(m, "client")}
    return [{"field": d["field"], "label": d["label"], "values": d["values"],
             "shown": [shown[d["field"]](m) if d["field"] in shown else value
                       for value, m in zip(d["values"], d["methodologies"])]} for d in differences]


def methodology_differences_data(methodologies):
    """What differs between these methodologies (compare.methodology_differences), as the pages show it."""
    return shown_differences(compare.methodology_differences(methodologies))


def comparison(sel, baseline=0, metric="tps", internal=False):
    """compare.comparison, named in the reader's language, its methodology differences as the pages show them."""
    answer = compare.comparison(sel, baseline, metric, internal, names=NAMES)
    answer["methodology_differences"] = shown_differences(answer["methodology_differences"])
    return answer
