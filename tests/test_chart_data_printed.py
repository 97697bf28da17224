"""Chart data tables show the numbers as the document printed them (issue 49.5): 10929.30, not 10929.3.

Expected values come from the data files (whitepaper/data/*.yaml): every metric cell a chart draws (TPS, QPS,
TPM, read-only and read-write QPS), as its table prints it."""

import re
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parent.parent / "whitepaper" / "data"
CHART_METRICS = ["tps", "qps", "tpm", "ro_qps", "rw_qps"]


def printed_cells(slug):
    doc = yaml.safe_load((DATA / f"{slug}.yaml").read_text())
    cells = []
    for table in doc["tables"]:
        for row in table["rows"]:
            cells += [cell for column, cell in zip(table["columns"], row) if column in CHART_METRICS and cell not in ("", "-")]
    return cells


def chart_data_cells(html):
    cells = []
    for table in re.findall(r'<details class="chart-data">(.*?)</details>', html, re.S):
        for row in re.findall(r"<tr><th scope=\"row\">.*?</tr>", table, re.S):
            cells += re.findall(r"<td>([^<]*)</td>", row)[1:]  # after memory: the metric cells
    return [c for c in cells if c]


@pytest.mark.parametrize("slug", ["huawei-2023-08-03-rds", "huawei-2025-10-21-postgresql", "huawei-2018-12-11-rds"])
def test_chart_data_tables_keep_printed_zeros(client, slug):
    html = client.get(f"/documents/{slug}/?lang=en").content.decode()
    printed = printed_cells(slug)
    shown = chart_data_cells(html)
    assert shown, "no chart data table"
    assert sorted(shown) == sorted(printed)  # every drawn cell once, exactly as printed
    if slug == "huawei-2023-08-03-rds":
        assert "10929.30" in shown and "10929.3" not in shown
