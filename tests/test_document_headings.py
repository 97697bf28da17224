"""Document pages name the engine heading above each section ("1.2 RDS for MySQL 5.6 测试数据"), so the
three "通用型测试数据" sections of a document say which version they are; the headings are the
documents' own, checked against the source texts ($SEEDS_DIR, default ../shared/seeds, as named by each data file)."""

import re
from pathlib import Path

import pytest
import yaml

from .seeds import require_seeds_dir

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parent.parent / "whitepaper" / "data"


def data_files():
    return sorted(p for p in DATA.glob("*.yaml") if not p.name.startswith("_"))


def printed_headings(source):
    """Every heading line of a source text, without markdown marks and the contents' page numbers."""
    lines = (require_seeds_dir() / source).read_text(encoding="utf-8").splitlines()
    return {re.sub(r"\t\s*\d*$", "", line.lstrip("# ")).strip() for line in lines}


@pytest.mark.parametrize("path", data_files(), ids=lambda p: p.stem)
def test_every_heading_is_printed_in_the_source_document(path):
    doc = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    headings = {t["heading"] for t in doc["tables"] if t.get("heading")}
    assert headings
    printed = printed_headings(doc["document"]["source_file"])
    assert headings <= printed, headings - printed
    for t in doc["tables"]:  # the section sits under its heading: 1.2.1 under 1.2
        if t.get("heading"):
            number = t["heading"].split()[0]
            assert t["section"].startswith(number + "."), (t["label"], t["section"], t["heading"])


def test_the_document_page_shows_each_heading_once_above_its_sections(client):
    html = client.get("/documents/huawei-2023-08-03-rds/?lang=zh-hans").content.decode()
    body = html.split('<nav class="toc', 1)[1]
    chapters = re.findall(r'<h2 class="chapter-heading"[^>]*>(.*?)</h2>', body)
    assert chapters[:3] == ["1.2 RDS for MySQL 5.6 测试数据", "1.3 RDS for MySQL 5.7 测试数据", "1.4 RDS for MySQL 8.0 测试数据"]
    assert len(chapters) == len(set(chapters)) == 8  # MySQL 5.6/5.7/8.0, PostgreSQL 12-15, SQL Server
    # Each "通用型测试数据" section comes after the heading naming its version.
    order = list(dict.fromkeys(m.group(0) for m in re.finditer(
        r"1\.[234] RDS for MySQL [\d.]+ 测试数据|1\.[234]\.1 通用型测试数据", body)))
    assert order == ["1.2 RDS for MySQL 5.6 测试数据", "1.2.1 通用型测试数据", "1.3 RDS for MySQL 5.7 测试数据",
                     "1.3.1 通用型测试数据", "1.4 RDS for MySQL 8.0 测试数据", "1.4.1 通用型测试数据"]
    # The contents, one line per chapter, put the sections under their heading, numbered once (the printed numbers).
    toc = html.split('<nav class="toc', 1)[1].split("</nav>", 1)[0]
    assert re.search(r'<li><strong>1\.2 RDS for MySQL 5\.6 测试数据</strong>：<span class="toc-section">1\.2\.1 通用型测试数据：', toc)
    english = client.get("/documents/huawei-2023-08-03-rds/?lang=en").content.decode()
    assert '1.2 RDS for MySQL 5.6 test data <span lang="zh-Hans" class="printed">(1.2 RDS for MySQL 5.6 测试数据)</span>' in english
