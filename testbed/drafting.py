"""The bundled data file of a document as written by hand, and a made-up next edition of the 2025-10-21 Huawei MySQL
whitepaper (tests/test_drafting.py, the drafting page's tests, benchmarks/draft_edition.py)."""

import yaml

from whitepaper.importer import DATA_DIR


def hand_made(slug):
    with open(DATA_DIR / f"{slug}.yaml", encoding="utf-8") as handle:
        return yaml.load(handle, Loader=yaml.BaseLoader)


def made_up_edition(text):
    """2025-10-21 MySQL edition 01 -> 2026-03-02 edition 02: two numbers changed, a row dropped, a flavour added."""
    edits = [
        ("文档版本 01", "文档版本 02"),
        ("发布日期 2025-10-21", "发布日期 2026-03-02"),
        ("1\t2\t800\t197.19\t3943.85\t", "1\t2\t800\t205.31\t4106.22\t"),  # 表 2-1 row 1
        ("4\t16\t5000\t1062\t21249\t", "4\t16\t5000\t1111\t22220\t"),  # 表 3-5 row 2
        ("32\t128\t30000\t4368\t87354\t\n", ""),  # 表 3-6 row 5 dropped
        ("8\t16\t5000\t2014\t40280\t", "16\t32\t10000\t3010.5\t60210.0\t\n8\t16\t5000\t2014\t40280\t"),  # 表 4-1: 16U32G
    ]
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text
