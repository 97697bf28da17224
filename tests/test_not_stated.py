""""Not stated" written once (issue 51.1): a value a document does not state or a run did not measure reads as one mark,
the en dash, on every page. It was written three ways (en dash, em dash, hyphen) in 20+ places, and a missing
number run through floatformat after its default showed an empty cell. The expected mark is written here literally."""

import ast
import re
from pathlib import Path

import pytest

from runs.models import BenchmarkProfile, Run, RunState, Sample, Target

from testbed.runs_support import make_user, seed_profiles_for_tests

ROOT = Path(__file__).resolve().parent.parent
MARK = "–"  # U+2013 EN DASH
# A dash standing alone for a missing value: a template default, a branch that prints only a dash, a cell of one dash.
TEMPLATE_MARKS = re.compile(r"""default(?:_if_none)?:["'][-—–]["']|%\}[—–](?:\{%| <)|>[—–]</t[dh]>""")


def test_no_template_writes_the_mark_by_hand():
    found = [f"{path.relative_to(ROOT)}: {m.group(0)}" for path in sorted((ROOT / "templates").rglob("*.html"))
             for m in TEMPLATE_MARKS.finditer(path.read_text())]
    assert found == [], "use {{ x|or_not_stated }} (format first) or {% not_stated %} (whitepaper.choices)"


def test_no_python_or_script_writes_the_mark_by_hand():
    found = []
    for package in ("whitepaper", "runs", "config"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts or path == ROOT / "whitepaper" / "choices.py":  # where the mark is defined
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and node.value in ("—", "–"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
                # `x or "-"`: a hyphen standing in for a missing value in words for a reader. The CSV's revision text
                # (export.py: "tps 434 -> -") is data, its cells ASCII, and keeps it.
                elif (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and path.name != "export.py"
                      and isinstance(node.values[-1], ast.Constant) and node.values[-1].value == "-"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    for path in sorted((ROOT / "static" / "js").glob("*.js")):
        found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in re.finditer(r"""["'`][—–]["'`]""", path.read_text())]
    assert found == [], "use whitepaper.choices.NOT_STATED_MARK"


def test_the_guards_find_a_mark_written_by_hand():
    assert TEMPLATE_MARKS.findall('{{ x|default:"—" }} {% if a %}—{% else %} <td>–</td> {{ y|default_if_none:"-" }}') == [
        'default:"—"', "%}—{%", ">–</td>", 'default_if_none:"-"']
    assert TEMPLATE_MARKS.findall("{{ t|table_label }}</a> — {{ vendor }} 1–4") == []  # punctuation and ranges


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_pgbench_comparison_shows_the_mark_for_its_qps(client, language):
    """pgbench prints no QPS: its mean QPS is missing, and the cell said nothing at all (floatformat of the default)."""
    seed_profiles_for_tests()
    client.force_login(make_user("not-stated-op", operator=True))
    target = Target.objects.create(name="pg", engine="postgresql", host="127.0.0.1", port=5432, database="db", user="u")
    profile = BenchmarkProfile.objects.get(slug="pgbench-ro-quick")
    runs = []
    for threads in (1, 2):
        run = Run.objects.create(target=target, profile=profile, params=profile.resolve({"threads": threads}),
                                 state=RunState.SUCCEEDED, summary={"tps": 100.0 * threads, "threads": threads})
        Sample.objects.bulk_create([Sample(run=run, t=t, threads=threads, tps=100.0 * threads) for t in (1, 2, 3)])
        runs.append(run)
    response = client.get(f"/runs/compare/?run={runs[0].pk}&run={runs[1].pk}&lang={language}")
    assert response.status_code == 200
    table = response.content.decode().split('id="compare-results"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr data-run=.*?</tr>", table, re.S)
    assert len(rows) == 2, table
    for row in rows:
        cells = re.findall(r'<td[^>]*data-label="([^"]*)"[^>]*>(.*?)</td>', row, re.S)
        assert [text.strip() for label, text in cells if label == "QPS"] == [MARK], cells  # not an empty cell
        tps = [re.sub(r"<[^>]+>", " ", text) for label, text in cells if label == "TPS"]
        assert len(tps) == 1 and tps[0].split()[0] in ("100.00", "200.00"), tps  # the TPS is there, formatted
