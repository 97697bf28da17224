"""Chinese and English: the message catalogue is complete, the language is chosen from the URL, the
cookie or Accept-Language (the API stays English), every page has a switch and hreflang twins, and
the pages speak one language: Chinese pages show no English interface text, English pages no Chinese
outside the printed labels and data they cite (marked lang="zh-Hans")."""

import datetime
import html
import re
import shutil
import subprocess
import sys
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import polib
import pytest
import yaml

from runs.models import BenchmarkProfile, Run, RunState, Target
from whitepaper.models import Document, InstanceFamily, PublishedResult

from testbed.runs_support import make_user
from testbed.runs_support import seed_profiles_for_tests

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES"
DATA = ROOT / "whitepaper" / "data"
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-Hans,zh;q=0.9,en;q=0.5"}
EN = {"HTTP_ACCEPT_LANGUAGE": "en-US,en;q=0.9"}
CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")
ALIBABA = "alibaba-2019-06-18-rds"
HUAWEI_2023 = "huawei-2023-08-03-rds"


# --- The catalogue ---------------------------------------------------------------------------------

def catalogue(domain="django"):
    return polib.pofile(str(LOCALE / f"{domain}.po"))


def key(entry):
    return (entry.msgctxt or "", entry.msgid, entry.msgid_plural)


def extract_messages(tmp_path):
    """The project's messages as `makemessages` finds them today: a copy of the source (no tests,
    virtualenv or node_modules) whose own makemessages writes into the copy, never into the repo."""
    copy = tmp_path / "src"
    ignore = shutil.ignore_patterns(".venv", "node_modules", "var", "tests", "docs", "benchmarks", ".git",
                                    "__pycache__", "locale", "*.png")
    shutil.copytree(ROOT, copy, ignore=ignore, symlinks=False)
    (copy / "locale").mkdir()
    for domain in ("django", "djangojs"):
        subprocess.run([sys.executable, "manage.py", "makemessages", "-l", "zh_Hans", "-d", domain, "--no-obsolete"],
                       cwd=copy, check=True, capture_output=True,
                       env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "config.settings"})
    return {domain: polib.pofile(str(copy / "locale" / "zh_Hans" / "LC_MESSAGES" / f"{domain}.po"))
            for domain in ("django", "djangojs")}


def test_catalogue_translates_every_string_of_the_interface(tmp_path):
    """Fails when a string was added (template, form, model, view, JS) and not translated in
    locale/zh_Hans: run scripts/messages.sh, translate, and commit the .po and .mo."""
    extracted = extract_messages(tmp_path)
    for domain, found in extracted.items():
        ours = {key(e): e for e in catalogue(domain)}
        missing = [e.msgid for e in found if key(e) not in ours]
        assert not missing, f"{domain}.po lacks {len(missing)} new string(s), e.g. {missing[:5]}"
        untranslated = [e.msgid for e in ours.values() if not e.translated()]
        assert not untranslated, f"{domain}.po: untranslated or fuzzy: {untranslated[:5]}"
        stale = [k[1] for k in ours if k not in {key(e) for e in found}]
        assert not stale, f"{domain}.po has strings the code no longer uses: {stale[:5]}"
    assert len(extracted["django"]) > 300


def test_msgfmt_reports_every_message_translated_and_the_compiled_catalogue_is_current():
    for domain in ("django", "djangojs"):
        po = LOCALE / f"{domain}.po"
        out = subprocess.run(["msgfmt", "--check", "--statistics", "-o", "/dev/null", str(po)],
                             capture_output=True, text=True, check=True)
        assert re.fullmatch(r"\d+ translated messages?\.\n", out.stderr), out.stderr  # no fuzzy, no untranslated
        assert not catalogue(domain).metadata_is_fuzzy
        mo = polib.mofile(str(LOCALE / f"{domain}.mo"))
        compiled = {key(e): (e.msgstr, e.msgstr_plural) for e in mo}
        source = {key(e): (e.msgstr, e.msgstr_plural) for e in catalogue(domain)}
        assert compiled == source, f"{domain}.mo is stale: run scripts/messages.sh"


def test_translations_keep_placeholders_and_use_the_documents_terms():
    po = {e.msgid: e for e in catalogue() if not e.msgctxt}
    for e in po.values():
        for text in (e.msgstr_plural.values() if e.msgid_plural else [e.msgstr]):
            assert sorted(re.findall(r"%\(\w+\)s|%\(\w+\)r|%%", e.msgid)) == sorted(re.findall(r"%\(\w+\)s|%\(\w+\)r|%%", text)), e.msgid
    # The documents' own words (DESIGN.md glossary), not invented ones.
    assert po["Max connections"].msgstr == "最大连接数"
    assert po["CPU:memory"].msgstr == "CPU:内存"
    assert po["memory ratio"].msgstr == "内存比"
    assert po["Read-only QPS"].msgstr == "只读QPS" and po["Read-write QPS"].msgstr == "读写QPS"
    assert po["Spec code"].msgstr == "规格编号"
    assert po["Estimated capacity"].msgstr == "预计可存储数据量"
    assert po["Single instance"].msgstr == "单实例"


def test_every_printed_chinese_text_of_the_data_files_has_an_english_rendering():
    for path in sorted(DATA.glob("*.yaml")):
        if path.name.startswith("_"):
            continue
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
        assert data["document"].get("notes_zh") and CJK.search(data["document"]["notes_zh"]), path.name
        for m in data["methodologies"]:
            for field in ("name", "workload", "client", "description"):
                if m.get(field):
                    zh = m.get(f"{field}_zh", "")
                    assert zh and (CJK.search(zh) or field == "workload"), (path.name, m["slug"], field)  # TPC-C is TPC-C
        for t in data["tables"]:
            assert t.get("label_en") and not CJK.search(t["label_en"]), (path.name, t["label"])
            assert bool(t.get("notes")) == bool(t.get("notes_zh")), (path.name, t["label"])
            if t.get("section"):
                assert t.get("section_en") and not CJK.search(t["section_en"]), (path.name, t["section"])
            # The rendering keeps the printed number (表 1-7 -> Table 1-7, 2.3 测试结果 -> 2.3 Test results).
            number = re.search(r"\d+(?:[.-]\d+)*", t["label"])
            assert number and number.group(0) in t["label_en"], t["label"]


# --- Choosing the language -------------------------------------------------------------------------

def test_accept_language_chooses_the_page_language(client):
    zh = client.get("/", **ZH).content.decode()
    assert '<html lang="zh-hans">' in zh and "已发布的 RDS 性能数据" in zh and "浏览规格" in zh
    assert re.search(r"\d+ 条结果，\d+ 份文档", zh)  # Chinese punctuation between the counts
    en = client.get("/", **EN).content.decode()
    assert '<html lang="en">' in en and "Published RDS performance" in en


def test_lang_parameter_wins_is_remembered_in_a_cookie_and_is_not_a_filter(client):
    r = client.get("/explore/?engine=mysql&version=8.0&lang=zh-hans", **EN)
    html = r.content.decode()
    assert r.status_code == 200 and '<html lang="zh-hans">' in html and "规格浏览" in html
    assert r.cookies["django_language"].value == "zh-hans"
    assert "筛选条件无效" not in html  # lang is not taken for an unknown filter
    n = PublishedResult.objects.newest_per_variant().filter(  # the explorer's default: newest edition only
        engine_version__engine__slug="mysql", engine_version__version="8.0").count()
    assert f"共 {n} 条已发布结果" in html
    # The cookie now chooses, whatever Accept-Language says; ?lang=en switches back.
    assert '<html lang="zh-hans">' in client.get("/sizing/", **EN).content.decode()
    r = client.get("/sizing/?lang=en", **ZH)
    assert '<html lang="en">' in r.content.decode() and r.cookies["django_language"].value == "en"
    assert '<html lang="en">' in client.get("/", **ZH).content.decode()
    # An unknown language is ignored (Accept-Language decides).
    assert '<html lang="zh-hans">' in client.get("/?lang=xx", HTTP_COOKIE="", **ZH).content.decode()


def test_every_page_links_its_twin_in_the_other_language_with_the_same_query(client):
    url = "/explore/?engine=mysql&version=5.7&sort=-tps&cols=flavor&cols=tps"
    html = client.get(url, **EN).content.decode()
    twin = "/explore/?engine=mysql&amp;version=5.7&amp;sort=-tps&amp;cols=flavor&amp;cols=tps&amp;lang=zh-hans"
    assert f'<link rel="alternate" hreflang="zh-Hans" href="http://testserver{twin}">' in html
    assert 'hreflang="en" href="http://testserver/explore/?engine=mysql&amp;version=5.7&amp;sort=-tps&amp;cols=flavor&amp;cols=tps&amp;lang=en"' in html
    assert 'hreflang="x-default" href="http://testserver/explore/?engine=mysql&amp;version=5.7&amp;sort=-tps&amp;cols=flavor&amp;cols=tps"' in html
    switch = re.search(r'<nav class="language-switch"[^>]*>(.*?)</nav>', html, re.S).group(1)
    assert f'href="{twin}"' in switch and "简体中文" in switch and 'aria-current="true">English<' in switch
    # Switching from a page named in the URL replaces the language, not adds a second one.
    html = client.get(url + "&lang=zh-hans").content.decode()
    assert 'href="/explore/?engine=mysql&amp;version=5.7&amp;sort=-tps&amp;cols=flavor&amp;cols=tps&amp;lang=en"' in html


def test_cached_pages_are_kept_per_language(client):
    """The page cache (shared and per process) must never answer a Chinese reader with the English page."""
    for _ in range(2):
        assert "Flavour explorer" in client.get("/explore/?engine=ppas", **EN).content.decode()
        zh = client.get("/explore/?engine=ppas", **ZH)
        assert "规格浏览" in zh.content.decode() and "Flavour explorer" not in zh.content.decode()
        assert {"Accept-Language", "Cookie"} <= {v.strip() for v in zh["Vary"].split(",")}
        assert zh["Content-Language"] == "zh-hans"


def test_a_language_named_in_the_url_is_remembered_even_from_the_page_cache(client):
    from django.test import Client

    first, second = Client(), Client()
    for c in (first, second):  # the second answer comes from the page cache
        r = c.get("/engines/mysql/8.0/?lang=zh-hans", **EN)
        assert r.status_code == 200 and r.cookies["django_language"].value == "zh-hans"
        assert '<html lang="zh-hans">' in r.content.decode()
        assert '<html lang="zh-hans">' in c.get("/engines/mysql/8.0/", **EN).content.decode()


def test_cached_pages_name_their_twins_on_the_host_they_were_asked_on(client):
    """hreflang twins are absolute URLs: a page cached for one host must not be served to another."""
    for host in ("127.0.0.1", "localhost"):
        html = client.get("/sizing/", HTTP_HOST=host, **EN).content.decode()
        assert f'hreflang="zh-Hans" href="http://{host}/sizing/?lang=zh-hans"' in html


def test_the_api_stays_english_whatever_the_reader_asks(client):
    r = client.get("/api/v1/results/?engine=oracle", **ZH)
    assert r.status_code == 400 and "Unknown engine 'oracle'." in r.json()["errors"]["engine"][0]
    r = client.get("/api/v1/nope/", HTTP_COOKIE="django_language=zh-hans", **ZH)
    assert r.status_code == 404 and not CJK.search(r.content.decode())
    assert client.get("/api/v1/docs/", **ZH).status_code == 200
    schema = client.get("/api/v1/schema/?format=json", **ZH).content
    assert schema == client.get("/api/v1/schema/?format=json", **EN).content and b"transactions per second" in schema
    assert client.get("/api/v1/results/?page_size=5", **ZH).content == client.get("/api/v1/results/?page_size=5", **EN).content


def test_javascript_catalogue_follows_the_page_language(client):
    translated = '"%s samples": "%s \\u4e2a\\u91c7\\u6837\\u70b9"'  # %s 个采样点, as the catalogue's JSON writes it
    assert translated in client.get("/jsi18n/?lang=zh-hans").content.decode()
    assert translated not in client.get("/jsi18n/?lang=en").content.decode()
    client.cookies.clear()
    html = client.get("/", **ZH).content.decode()
    assert '<script src="/jsi18n/?lang=zh-hans" defer></script>' in html


# --- The catalogue's text in each language -----------------------------------------------------------

def rows_value(printed):
    """亿 = 10^8, 万 = 10^4, by hand."""
    for suffix, factor in (("亿", 10**8), ("万", 10**4)):
        if printed.endswith(suffix):
            return int(Decimal(printed[:-1]) * factor)
    return int(printed)


def test_yi_and_wan_as_printed_in_chinese_and_as_numbers_in_english(client):
    data = yaml.load((DATA / f"{ALIBABA}.yaml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    printed = [row[t["columns"].index(column)] for t in data["tables"] for row in t["rows"]
               for column in ("capacity_rows", "data_rows", "hot_rows") if column in t["columns"]]
    assert any("亿" in p for p in printed) and any("万" in p for p in printed)
    zh = client.get(f"/documents/{ALIBABA}/", **ZH).content.decode()
    en = client.get(f"/documents/{ALIBABA}/", **EN).content.decode()
    for p in printed:  # cells carry their column (data-col) for the phone layout
        assert re.search(rf'<td[^>]*data-col="\w+_rows">{p}</td>', zh)
        assert re.search(rf'<td[^>]*data-col="\w+_rows">{rows_value(p):,}</td>', en), p
    assert re.search(r'<td[^>]*>10,000,000,000</td>', en)  # 100亿


def test_document_page_in_each_language_cites_the_printed_labels(client):
    doc = Document.objects.get(slug=HUAWEI_2023)
    zh = client.get(doc.get_absolute_url(), **ZH).content.decode()
    en = client.get(doc.get_absolute_url(), **EN).content.decode()
    # Titles, dates, sections and labels.
    assert '<span lang="zh-Hans">云数据库 RDS 性能白皮书</span>' in zh and "Cloud Database RDS Performance Whitepaper" not in zh
    assert "Cloud Database RDS Performance Whitepaper<br><small lang=\"zh-Hans\">云数据库 RDS 性能白皮书</small>" in en
    assert "2023年8月3日" in zh and "Aug. 3, 2023" in en
    assert "1.2.1 通用型测试数据" in zh and "General-purpose test data" not in zh
    assert '1.2.1 General-purpose test data <span lang="zh-Hans" class="printed">(1.2.1 通用型测试数据)</span>' in en
    assert 'Table 1-1 CPU:memory = 1:2 <span lang="zh-Hans" class="printed">(表 1-1 CPU:内存=1:2)</span>' in en
    assert "表 1-1 CPU:内存=1:2" in zh and "Table 1-1" not in zh
    # Methodology names, the IOPS note, families in charts.
    assert "sysbench 1.0.18 OLTP 读写，MySQL 5.6/5.7，200 线程，客户端 c3.2xlarge.2" in zh
    assert "sysbench 1.0.18 OLTP read-write, MySQL 5.6/5.7, 200 threads, client c3.2xlarge.2" in en
    assert "取决于云硬盘" in zh and "depends on disk" in en
    # The document's notes in Chinese on Chinese pages; other transcription notes say they are English.
    assert doc.notes_zh and doc.notes_zh[:30] in zh and doc.notes[:30] not in zh
    assert doc.notes[:30] in en and doc.notes_zh[:30] not in en
    table = doc.tables.get(label="表 1-3 CPU:内存=1:4")
    assert "按原文保留" in table.notes_zh and "kept as printed" in table.notes
    zh_text, en_text = (html.unescape(re.sub(r"<[^>]+>", "", page)) for page in (zh, en))
    assert table.notes_zh.replace("`", "") in zh_text and table.notes in en_text
    assert table.notes not in zh_text and table.notes_zh.replace("`", "") not in en_text
    assert "<code>max_connections</code>" in zh
    m = doc.methodologies.get(slug="huawei-2023-08-03-rds-sysbench-mysql-c3")
    assert "每个事务 18 条 SQL 语句" in m.description_zh and "每个事务 18 条 SQL 语句" in zh
    assert m.description[:40] in en and m.description[:40] not in zh
    assert "华北-北京一" in m.client_zh and "<code>--max-requests=0</code>" in zh


def test_explorer_families_in_each_language(client):
    url = "/explore/?engine=mysql&version=8.0&family=dedicated&cols=family&cols=flavor"
    assert '<td data-col="family" class="text">独享型</td>' in client.get(url, **ZH).content.decode()
    assert ('<td data-col="family" class="text">Dedicated <span lang="zh-Hans" class="printed">(独享型)</span></td>'
            in client.get(url, **EN).content.decode())


def test_engine_page_chart_titles_and_legends_in_the_readers_language(client):
    from .test_pages import chart_specs

    zh = chart_specs(client.get("/engines/mysql/5.7/", **ZH).content.decode())
    en = chart_specs(client.get("/engines/mysql/5.7/", **EN).content.decode())
    # captions name engine and version before the family (issue 36.5)
    assert {"MySQL 5.7 · 通用型", "MySQL 5.7 · 独享型", "MySQL 5.7 · 鲲鹏通用增强型"} <= {s["title"] for s in zh}
    assert {"MySQL 5.7 · General-purpose", "MySQL 5.7 · Dedicated", "MySQL 5.7 · Kunpeng general-enhanced (ARM)"} <= \
        {s["title"] for s in en}
    assert zh[0]["x_label"] == "CPU核数" and en[0]["x_label"] == "vCPUs"
    legends_zh = {s["label"] for spec in zh for s in spec["series"]}
    # Huawei's 2023 and 2025 editions print these lines identically: one line, named so.
    assert any("2023 与 2025 相同" in label for label in legends_zh), legends_zh


# --- No interface text in the other language ---------------------------------------------------------

class VisibleText(HTMLParser):
    """Text a reader sees (and title / aria-label / placeholder / alt), leaving out script, style,
    code (parameter names) and elements whose lang attribute `skip` says are quoted in another language."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self, skip):
        super().__init__(convert_charrefs=True)
        self.skip, self.stack, self.texts = skip, [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        hidden = (bool(self.stack) and self.stack[-1][1]) or tag in ("script", "style", "code") or \
            (tag != "html" and self.skip(attrs.get("lang") or ""))
        if not hidden:
            self.texts.extend(attrs[a].strip() for a in ("title", "aria-label", "placeholder", "alt") if attrs.get(a))
        if tag not in self.VOID:
            self.stack.append((tag, hidden))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if data.strip() and not (self.stack and self.stack[-1][1]):
            self.texts.append(" ".join(data.split()))


def visible(html, skip):
    parser = VisibleText(skip)
    parser.feed(html)
    return parser.texts


# Words that stay as they are in Chinese pages: units, metrics, products and tools, and names of
# languages in the switch (DESIGN.md: "data and units such as TPS, QPS, vCPU, MySQL aside").
KEPT_WORDS = {
    "TPS", "QPS", "TPM", "CPU", "IOPS", "vCPU", "GB", "MySQL", "MariaDB", "PostgreSQL", "SQL", "Server", "PPAS", "HA", "CSV", "JSON",
    "RDS", "sysbench", "pgbench", "HammerDB", "TPC", "Web", "English", "ECS", "OLTP", "Celery", "Worker", "ARM", "ms",
    "EVS", "IP", "IO", "CentOS", "Windows", "GitHub", "Oracle", "VPC", "SSD", "GiB", "InnoDB", "PGDG", "BEGIN", "COMMIT", "SELECT", "INSERT", "UPDATE", "DELETE", "rw", "ro", "oltp", "legacy", "lua", "sql", "client", "ID", "GB", "thr", "p", "s", "x", "c", "T", "G",
    # TLS: the protocol, certificate formats and libpq's mode names (disable, require, verify-ca, verify-full) stay as written.
    "TLS", "CA", "PEM", "disable", "require", "verify", "full",
    # The tools' open-loop options (pgbench -R, -L; sysbench --rate) stay as written: they are what is typed.
    "R", "L", "rate",
    # Names of statistical methods (issue 46: Welch's t, Holm's adjustment) stay as written, like the tools' names.
    "Welch", "Holm",
}


def english_leftovers(texts, data_words=()):
    """Latin-letter words in Chinese-page text that are neither kept words nor data."""
    allowed = KEPT_WORDS | set(data_words)
    left = []
    for text in texts:
        for word in re.findall(r"[A-Za-z][A-Za-z0-9]*", text):
            if word not in allowed and not re.search(r"\d", word) and not (len(word) <= 2 and word.islower()):
                left.append((word, text))
    return left


def data_words(*values):
    return {w for v in values for w in re.findall(r"[A-Za-z]+", str(v))}


def catalogue_words():
    """Words of the data the pages show as data in every language: spec codes, engine versions,
    methodology parameters and workloads, transcription notes (marked lang="en"), usernames, hosts."""
    from whitepaper.models import Flavor, Methodology

    words = data_words(*Flavor.objects.values_list("spec_code", flat=True), *Document.objects.values_list("slug", flat=True))
    for m in Methodology.objects.all():
        words |= data_words(m.workload, m.tool_version, *m.parameters.keys(), *m.parameters.values())
    return words


def assert_chinese_page(html, url, extra_words=()):
    texts = visible(html, skip=lambda lang: lang.startswith("en"))
    english = {e.msgid for e in catalogue() if e.msgstr != e.msgid and re.search(r"[A-Za-z]{3}", e.msgid)
               and "%(" not in e.msgid}
    typed = data_words(*[v for _, v in parse_qsl(urlsplit(url).query)])  # the reader's own input, echoed
    data = catalogue_words() | typed | set(extra_words)
    # A catalogue string shown as such, unless it is data that happens to be one ("off" as a sysbench value).
    shown = [t for t in texts if t in english and not data_words(t) <= data]
    assert not shown, f"{url}: English interface text in the Chinese page: {shown[:5]}"
    left = english_leftovers(texts, data)
    assert not left, f"{url}: English words in the Chinese page: {left[:8]}"


def assert_english_page(html, url):
    texts = visible(html, skip=lambda lang: lang.lower().startswith("zh"))
    chinese = [t for t in texts if CJK.search(t) and t != "简体中文"]
    assert not chinese, f"{url}: Chinese outside printed labels in the English page: {chinese[:5]}"


CATALOGUE_PAGES = [
    "/", "/explore/", "/explore/?engine=mysql&version=8.0&family=dedicated&sort=-tps&cols=vendor&cols=document&cols=family"
    "&cols=memory_ratio&cols=flavor&cols=vcpus&cols=memory_gb&cols=deployment&cols=max_connections&cols=iops&cols=tps"
    "&cols=qps&cols=tpm&cols=ro_qps&cols=rw_qps&cols=table",
    "/explore/?engine=ppas&cols=document&cols=flavor&cols=ro_qps&cols=rw_qps&cols=table",
    "/explore/?min_tps=abc&engine=oracle",
    "/compare/?sel=engine%3Dmysql%26version%3D5.7%26family%3Ddedicated%26document%3Dhuawei-2023-08-03-rds"
    "&sel=engine%3Dmysql%26version%3D8.0%26family%3Ddedicated%26document%3Dhuawei-2023-08-03-rds",
    "/compare/?sel=engine%3Dmysql%26vendor%3Dalibaba&sel=engine%3Dmysql%26vendor%3Dhuawei&metric=qps",
    "/compare/", "/sizing/", "/sizing/?engine=mysql&version=8.0&metric=tps&target=3000",
    "/sizing/?engine=sqlserver&metric=tps&target=10", "/sizing/?engine=mysql&target=-1",
    "/sizing/?engine=mysql&version=9.9&target=100", "/explore/?version=10", "/engines/postgresql/", "/engines/sqlserver/",
    "/accounts/login/",
]


def catalogue_urls():
    """The pages above, every document and every engine version."""
    from whitepaper.models import EngineVersion

    from whitepaper.models import Flavor

    flavours = [Flavor.objects.filter(results__engine_version__engine__slug=engine).order_by("-vcpus").first()
                for engine in ("postgresql", "ppas", "sqlserver")]  # a revised one, hot data, editions (issue 36.4)
    return (CATALOGUE_PAGES + [d.get_absolute_url() for d in Document.objects.all()]
            + [v.get_absolute_url() for v in EngineVersion.objects.filter(results__isnull=False).distinct()]
            + [f.get_absolute_url() for f in flavours])


def test_catalogue_pages_speak_one_language(client):
    compare_ids = list(PublishedResult.objects.filter(table__document__slug=ALIBABA).values_list("pk", flat=True)[:2])
    urls = catalogue_urls() + ["/compare/?" + "&".join(f"sel={i}" for i in compare_ids)]
    assert len([u for u in urls if u.startswith("/documents/")]) == 5
    for url in urls:
        zh, en = client.get(url, **ZH), client.get(url, **EN)
        assert zh.status_code == en.status_code == 200, url
        assert_chinese_page(zh.content.decode(), url)
        assert_english_page(en.content.decode(), url)


@pytest.fixture
def runs_pages(client):
    """Every runs page, with a target, a succeeded run that reproduces a published row and a failed one."""
    seed_profiles_for_tests()
    user = make_user("i18n-op", staff=True, operator=True)
    target = Target.objects.create(name="maria", engine="mysql", host="127.0.0.1", port=3306, database="sbtest",
                                   user="bench", vcpus=2, memory_gb=4)
    profile = BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick")
    published = PublishedResult.objects.filter(table__document__slug="huawei-2025-10-21-mysql").first()
    summary = {"threads": 2, "transactions": 300, "tps": 100.5, "qps": 2010.0, "queries": 6030, "latency_min_ms": 1.0,
               "latency_avg_ms": 19.9, "latency_max_ms": 40.0, "latency_p95_ms": 30.0, "errors": 0,
               "steps": [{"threads": 2, "tps": 100.5, "qps": 2010.0, "latency_p95_ms": 30.0}]}
    done = Run.objects.create(target=target, profile=profile, params=profile.resolve({}), requested_by=user,
                              state=RunState.SUCCEEDED, summary=summary, reproduces=published, step=1,
                              log="sysbench 1.0.20\n", command_line="sysbench ...",
                              round_trip={"median_ms": 0.21, "min_ms": 0.18, "max_ms": 0.4, "queries": 7},
                              tls={"mode": "verify-ca", "tool": {"source": "performance_schema.status_by_thread", "sessions": 2,
                                   "encrypted": 2, "versions": ["TLSv1.3"], "ciphers": ["TLS_AES_256_GCM_SHA384"]}})
    failed = Run.objects.create(target=target, profile=profile, params=profile.resolve({}), requested_by=user,
                                state=RunState.FAILED, reason="connection refused")
    # A repeat group judged a regression (as runs.history stores it), started by a schedule.
    from runs.models import RepeatGroup, Schedule
    from runs.schedules import save_schedule

    schedule = save_schedule(Schedule(name="nightly", target=target, profile=profile, cron="0 3 * * *", repeats=2))
    group = RepeatGroup.objects.create(count=2)
    trend = {"tps": 101.0, "median": 120.0, "mean": 120.0, "stdev": 2.0, "band": [116.0, 124.0], "change_pct": -15.8,
             "window": 3, "threshold_pct": 5.0, "earlier_runs": [done.pk], "earlier_results": [[done.pk]],
             "repeat_group": {"id": group.pk, "count": 2, "n": 2, "mean": 101.0, "stdev": 1.41, "tps": [100.0, 102.0]}}
    repeats = [Run.objects.create(target=target, profile=profile, params=profile.resolve({}), requested_by=user,
                                  state=RunState.SUCCEEDED, summary={**summary, "tps": tps}, step=1, repeat_group=group,
                                  repeat_index=i, schedule=schedule, regression=True, trend=trend)
               for i, tps in ((1, 100.0), (2, 102.0))]
    client.force_login(user)
    urls = ["/runs/", "/runs/?state=succeeded", "/runs/new/", f"/runs/new/?reproduce={published.pk}",
            f"/runs/new/?target={target.pk}", f"/runs/{done.pk}/", f"/runs/{failed.pk}/", "/runs/targets/",
            "/runs/targets/new/", f"/runs/targets/{target.pk}/", f"/runs/{repeats[1].pk}/",
            f"/runs/series/?target={target.pk}&profile={profile.pk}", "/runs/regressions/",
            f"/runs/compare/?run={repeats[0].pk}&run={repeats[1].pk}", "/runs/schedules/", "/runs/schedules/new/",
            f"/runs/schedules/{schedule.pk}/", f"/runs/schedules/{schedule.pk}/delete/"]
    # Data the pages show as it is: profile names, run parameters (the tools' names for them),
    # usernames, the log, the reason.
    words = data_words(*BenchmarkProfile.objects.values_list("name", flat=True), user.username, target.name,
                       failed.reason, done.log, done.command_line, target.user, target.database, target.queue,
                       *done.params.keys(), *done.params.values(), schedule.name, schedule.cron,
                       *InstanceFamily.objects.values_list("slug", flat=True))  # typed into the family field
    return urls, words


def test_runs_pages_speak_one_language(client, runs_pages):
    urls, words = runs_pages
    for url in urls:
        zh, en = client.get(url, **ZH), client.get(url, **EN)
        assert zh.status_code == en.status_code == 200, url
        assert_chinese_page(zh.content.decode(), url, words)
        assert_english_page(en.content.decode(), url)
    # Form errors too (validation messages in the reader's language).
    zh = client.post("/runs/targets/new/", {"name": "x", "engine": "mysql", "host": "bad host;rm", "port": "99999",
                                            "database": "1db", "user": "u", "queue": "Q!"}, **ZH)
    html = zh.content.decode()
    assert "请输入主机名或 IP 地址" in html and "Enter a hostname" not in html
    assert_chinese_page(html, "POST /runs/targets/new/", words)


def test_a_run_dates_and_dates_in_the_lists_follow_the_language(client, runs_pages):
    html = client.get("/", **ZH).content.decode()
    assert "2025年10月21日" in html and "2019年6月18日" in html
    html = client.get("/", **EN).content.decode()
    assert "Oct. 21, 2025" in html and "June 18, 2019" in html
    assert datetime.date(2019, 6, 18) == Document.objects.get(slug=ALIBABA).published
