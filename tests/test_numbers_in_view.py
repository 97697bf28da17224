"""What the numbers mean, said where they appear, in both languages (issue 21, "Numbers in view"):
the glossary's facts against the data files, methodology parameters named for the reader (no raw
`snake_case` keys) with values in the reader's language, and the Chinese values' importer check.
Browser layout (widths, legends, keyboard): tests/test_numbers_in_view_browser.py."""

import html as html_lib
import io
import re
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from whitepaper.models import Document, Methodology

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parent.parent / "whitepaper" / "data"
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-Hans,zh;q=0.9,en;q=0.5"}
EN = {"HTTP_ACCEPT_LANGUAGE": "en-US,en;q=0.9"}
PAGES = ["/explore/", "/sizing/?engine=mysql&version=8.0&metric=tps&target=3000", "/engines/mysql/5.7/",
         "/compare/?sel=engine%3Dmysql%26version%3D5.7%26family%3Ddedicated&sel=engine%3Dmysql%26version%3D8.0%26family%3Ddedicated",
         "/editions/huawei-2023-08-03-rds/huawei-2025-10-21-postgresql/", "/documents/huawei-2025-10-21-mysql/"]


def data_files():
    return [yaml.load(p.read_text(encoding="utf-8"), Loader=yaml.BaseLoader) for p in sorted(DATA.glob("*-*.yaml"))]


def qps_per_tps(vendor):
    """QPS ÷ TPS of every row printing both, by hand from the data files."""
    ratios = []
    for data in data_files():
        if data["document"]["vendor"] != vendor:
            continue
        for table in data["tables"]:
            columns = table["columns"]
            if "tps" in columns and "qps" in columns:
                for row in table["rows"]:
                    tps, qps = row[columns.index("tps")], row[columns.index("qps")]
                    if tps and qps:
                        ratios.append(float(qps) / float(tps))
    return ratios


def glossary(client, path, lang):
    page = client.get(path, **lang).content.decode()
    found = re.search(r'<details class="glossary">(.*?)</details>', page, re.S)
    assert found, f"{path}: no glossary"
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", found.group(1)))


def test_it_says_what_the_ratio_and_metrics_mean_where_they_appear(client):
    for path in PAGES:
        en, zh = glossary(client, path, EN), glossary(client, path, ZH)
        assert "1:4 is 4 GB for each vCPU" in en and "1:4 即每个 vCPU 4 GB" in zh
        for term in ("TPS", "QPS", "TPM"):
            assert term in en and term in zh


def test_its_qps_explanation_matches_the_printed_numbers():
    huawei, alibaba = qps_per_tps("huawei"), qps_per_tps("alibaba")
    at_20 = [r for r in huawei if abs(r - 20) < 0.05]
    others = [r for r in huawei if abs(r - 20) >= 0.05]
    # the glossary: "20 × TPS (in 360 of 370 rows; 19.8 to 20.9 × in the others)", Alibaba "17.7 to 18.6 ×"
    assert (len(at_20), len(huawei)) == (360, 370)
    assert (round(min(others), 1), round(max(others), 1)) == (19.8, 20.9)
    assert (round(min(alibaba), 1), round(max(alibaba), 1)) == (17.7, 18.6)
    # and the documents describe 18 statements per transaction while counting 20 (methodologies, as transcribed)
    huawei_sysbench = [m for d in data_files() if d["document"]["vendor"] == "huawei" for m in d["methodologies"]
                       if m.get("tool") == "sysbench"]
    assert huawei_sysbench and all(m["statements_per_transaction"] == "20" for m in huawei_sysbench)
    assert any("18 SQL statements" in m["description"] for m in huawei_sysbench)


def methodology_block(page):
    return re.search(r'<section class="methodology"[^>]*>(.*?)</section>', page, re.S).group(1)


@pytest.mark.parametrize("slug", [p.stem for p in sorted(DATA.glob("*-*.yaml"))])
def test_it_names_methodology_parameters_in_the_readers_language(client, slug):
    data = yaml.load((DATA / f"{slug}.yaml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    keys = {k for m in data["methodologies"] for k in (m.get("parameters") or {})}
    en = methodology_block(client.get(f"/documents/{slug}/", **EN).content.decode())
    zh = methodology_block(client.get(f"/documents/{slug}/", **ZH).content.decode())
    for block in (en, zh):
        terms = re.findall(r"<dt>(.*?)</dt>", block, re.S)
        assert not [t for t in terms if re.search(r"\b[a-z]+_[a-z_]+\b", t)], f"raw keys in {slug}: {terms}"
    zh_terms = " ".join(re.findall(r"<dt>(.*?)</dt>", zh, re.S))
    assert not re.search(r"\b(Region|Virtual users|Scale factor|Server version|Clients and jobs)\b", zh_terms)
    for m in data["methodologies"]:  # each Chinese value the data file gives is what the Chinese page shows
        for key, value in (m.get("parameters_zh") or {}).items():
            assert key in keys
            shown = re.sub(r"`([^`]+)`", r"<code>\1</code>", html_lib.escape(value, quote=False))
            assert shown in zh, (slug, key)


def test_every_english_parameter_value_in_prose_has_a_chinese_value():
    """Values written as English words (not commands, numbers or names) need `parameters_zh`."""
    prose = re.compile(r"(?<![-\w])(the|per|with|and|from|until|built|created|unchecked|off|including|document's)\b")
    missing = [(m["slug"], key) for d in data_files() for m in d["methodologies"]
               for key, value in (m.get("parameters") or {}).items()
               if prose.search(value) and key not in (m.get("parameters_zh") or {})]
    assert missing == []


def test_the_importer_rejects_a_chinese_value_for_a_parameter_that_does_not_exist(tmp_path):
    text = (DATA / "huawei-2025-10-21-postgresql.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("    parameters_zh:\n", "    parameters_zh:\n      databse: 错字\n", 1), encoding="utf-8")
    before = list(Methodology.objects.order_by("slug").values_list("slug", "parameters_zh"))
    with pytest.raises(CommandError) as excinfo:
        call_command("import_whitepapers", str(bad), stdout=io.StringIO())
    message = str(excinfo.value)
    assert str(bad) in message and "parameters_zh" in message and "databse" in message
    assert list(Methodology.objects.order_by("slug").values_list("slug", "parameters_zh")) == before
    assert Document.objects.filter(slug="huawei-2025-10-21-postgresql").exists()
