"""The API as analysts and integrators use it (issue 37): Bearer tokens beside Token, typed run settings,
absolute run URLs, the smaller consistency items, one rate-limit count per client, `updated_since` and the
Atom feed."""

import os
import subprocess
import sys

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from .embedded import copy_of
from .gunicorn_support import ROOT, gunicorn, server_env
from .tiers import tier

pytestmark = pytest.mark.django_db

API = "/api/v1"
ACCEPTED_CHALLENGE = 'Bearer realm="api", Token realm="api"'


@pytest.fixture
def operator_token(operator_user):
    return Token.objects.create(user=operator_user).key


# --- Point 4: Authorization: Bearer beside Token --------------------------------------------------

@pytest.mark.parametrize("scheme", ["Bearer", "Token", "bearer"])
def test_it_accepts_a_bearer_token_as_well_as_token(client, operator_token, scheme):
    response = client.get(f"{API}/runs/", HTTP_AUTHORIZATION=f"{scheme} {operator_token}")
    assert response.status_code == 200, response.content[:300]
    assert response.json()["count"] == 0


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", "Token wrong", "Basic dXNlcjpwYXNz"])
def test_a_401_names_the_schemes_accepted(client, db, authorization):
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    response = client.get(f"{API}/runs/", **headers)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == ACCEPTED_CHALLENGE
    assert response.json()["code"] in ("not_authenticated", "authentication_failed")


def test_a_bad_bearer_token_on_a_public_read_is_a_401_too(client, db):
    response = client.get(f"{API}/vendors/", HTTP_AUTHORIZATION="Bearer wrong")
    assert response.status_code == 401 and response["WWW-Authenticate"] == ACCEPTED_CHALLENGE


def test_the_schema_documents_both_schemes(client):
    schema = client.get(f"{API}/schema/?format=json").json()
    schemes = schema["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {"type": "http", "scheme": "bearer",
                                     "description": schemes["bearerAuth"]["description"]}
    assert schemes["tokenAuth"]["type"] == "apiKey" and schemes["tokenAuth"]["name"] == "Authorization"
    runs_list = schema["paths"]["/api/v1/runs/"]["get"]
    # Each scheme alone is enough (a list of alternatives, not one requirement naming both).
    assert {"bearerAuth": []} in runs_list["security"] and {"tokenAuth": []} in runs_list["security"]


# --- Point 1: run settings typed whatever the entry point --------------------------------------------

@pytest.fixture
def mysql_target(db):
    from runs.models import Target

    from testbed.runs_support import PASSWORD

    target = Target(name="maria-37", engine="mysql", host="127.0.0.1", port=3306, database="sbtest", user="bench")
    target.set_password(PASSWORD)
    target.save()
    return target


def overrides_schema(client):
    schema = client.get(f"{API}/schema/?format=json").json()
    return schema["components"]["schemas"]["RunOverrides"]


def assert_typed_as_the_schema_says(client, overrides):
    import jsonschema

    jsonschema.validate(overrides, overrides_schema(client))


def test_a_run_launched_from_the_form_reads_typed_in_the_api(client, operator_user, operator_token, mysql_target, profiles):
    client.force_login(operator_user)
    response = client.post("/runs/new/", {"target": mysql_target.pk, "profile": profiles["sysbench-oltp-rw-mysql-quick"].pk,
                                          "threads": "4", "duration_s": "5", "thread_sweep": "2, 4, 8"})
    assert response.status_code == 302, response.context["form"].errors if response.context else response
    client.logout()
    run = client.get(f"{API}/runs/", HTTP_AUTHORIZATION=f"Bearer {operator_token}").json()["results"][0]
    # Only what differs from the profile is an override; each typed as the schema says.
    assert run["overrides"] == {"threads": 4, "duration_s": 5, "thread_sweep": [2, 4, 8]}
    assert_typed_as_the_schema_says(client, run["overrides"])
    assert run["params"]["thread_sweep"] == [2, 4, 8] and run["params"]["threads"] == 4


def test_text_values_sent_to_the_api_are_stored_typed(client, operator_token, mysql_target, profiles):
    response = client.post(f"{API}/runs/", {"target": mysql_target.pk, "profile": "sysbench-oltp-rw-mysql-quick",
                                            "overrides": {"threads": "6", "thread_sweep": "3 6", "prepared": "false"}},
                           content_type="application/json", HTTP_AUTHORIZATION=f"Token {operator_token}")
    assert response.status_code == 201, response.content
    assert response.json()["overrides"] == {"threads": 6, "thread_sweep": [3, 6], "prepared": False}
    stored = client.get(f"{API}/runs/{response.json()['id']}/", HTTP_AUTHORIZATION=f"Token {operator_token}").json()
    assert_typed_as_the_schema_says(client, stored["overrides"])


def test_a_schedule_stores_its_overrides_typed(client, staff_user, mysql_target, profiles):
    token = Token.objects.create(user=staff_user).key
    response = client.post(f"{API}/schedules/", {"name": "nightly-37", "target": mysql_target.pk,
                                                 "profile": "sysbench-oltp-rw-mysql-quick", "cron": "0 3 * * *",
                                                 "overrides": {"threads": "8", "thread_sweep": "4, 8"}},
                           content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 201, response.content
    assert response.json()["overrides"] == {"threads": 8, "thread_sweep": [4, 8]}


def test_the_migration_types_stored_runs_settings(client, operator_user, operator_token, mysql_target, profiles):
    import importlib

    from django.apps import apps

    from runs.models import Run

    profile = profiles["sysbench-oltp-rw-mysql-quick"]
    # As the web form stored them before issue 37 (and one value no parser accepts, which is kept as it was).
    old = Run.objects.create(target=mysql_target, profile=profile, requested_by=operator_user,
                             overrides={"threads": "4", "duration_s": " 5", "thread_sweep": "2, 4, 8", "prepared": "on"},
                             params=profile.resolve({"threads": 4, "duration_s": 5, "thread_sweep": [2, 4, 8]}))
    odd = Run.objects.create(target=mysql_target, profile=profile, requested_by=operator_user,
                             overrides={"threads": "lots"}, params=profile.resolve({}))
    migration = importlib.import_module("runs.migrations.0014_i37_typed_overrides")
    migration.forwards(apps, None)
    run = client.get(f"{API}/runs/{old.pk}/", HTTP_AUTHORIZATION=f"Token {operator_token}").json()
    assert run["overrides"] == {"threads": 4, "duration_s": 5, "thread_sweep": [2, 4, 8], "prepared": True}
    assert_typed_as_the_schema_says(client, run["overrides"])
    assert Run.objects.get(pk=odd.pk).overrides == {"threads": "lots"}


# --- Point 5: a run's url is its API URL, html_url its page ---------------------------------------------

def test_a_runs_url_is_its_absolute_api_url_and_html_url_its_page(client, operator_token, mysql_target, profiles):
    auth = {"HTTP_AUTHORIZATION": f"Bearer {operator_token}"}
    created = client.post(f"{API}/runs/", {"target": mysql_target.pk, "profile": "sysbench-oltp-rw-mysql-quick"},
                          content_type="application/json", **auth).json()
    run_id = created["id"]
    assert created["url"] == f"http://testserver/api/v1/runs/{run_id}/"
    assert created["html_url"] == f"http://testserver/runs/{run_id}/"
    listed = client.get(f"{API}/runs/", **auth).json()["results"][0]
    assert (listed["url"], listed["html_url"]) == (created["url"], created["html_url"])
    # A token client follows `url` to the run itself (it was the page: a 302 to the login page).
    followed = client.get(listed["url"], **auth)
    assert followed.status_code == 200 and followed.json()["id"] == run_id
    schema = client.get(f"{API}/schema/?format=json").json()["components"]["schemas"]["Run"]["properties"]
    assert schema["url"]["format"] == "uri" and schema["html_url"]["format"] == "uri"


# --- Point 6: the smaller items ----------------------------------------------------------------------

def test_every_operation_declares_the_json_414(client):
    schema = client.get(f"{API}/schema/?format=json").json()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            response = operation["responses"].get("414")
            assert response is not None, (method, path)
            media = response["content"]["application/json"]
            assert media["example"]["code"] == "request_line_too_long", (method, path)


@pytest.mark.parametrize("path", [f"{API}/results/?format=csv&engine=ppas", f"{API}/results/csv/?engine=ppas",
                                  f"{API}/results/?format=parquet&engine=ppas", f"{API}/results/parquet/?engine=ppas"])
@pytest.mark.parametrize("paging", ["page_size=1", "page=2", "pagination=cursor"])
def test_both_csvs_and_parquets_refuse_pages_alike(client, path, paging):
    response = client.get(f"{path}&{paging}")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    name = paging.split("=")[0]
    assert response.json()["errors"] == {name: [
        "The CSV (and the Parquet) holds every matching row: page, page_size, pagination and cursor are for JSON pages."]}


def find_result(client, query, **printed):
    rows = client.get(f"{API}/results/?{query}&page_size=500").json()["results"]
    matches = [r for r in rows if all(r["printed"][k] == v for k, v in printed.items())]
    assert len(matches) == 1, matches
    return matches[0]


def test_computed_columns_are_in_json_too_and_selectable(client):
    # Huawei 2023, table 1-1 (MySQL general-purpose, CPU:memory = 1:2): 1 core, 2 GB, TPS 157, QPS 3140 as printed.
    # Huawei's QPS counts 20 statements per transaction: normalised to 18, 3140 x 18 / 20 = 2826.00.
    row = find_result(client, "document=huawei-2023-08-03-rds&vcpus=1&memory_gb=2", tps="157", qps="3140")
    assert row["qps_normalised"] == 2826.0 and row["memory_ratio_derived"] is None  # the table states 1:2
    # Alibaba 2019, rds.mysql.s2.xlarge: 2 cores, 8 GB, grouped by no memory ratio: derived 1:4.
    alibaba = find_result(client, "flavor=rds.mysql.s2.xlarge", tps="307")
    assert alibaba["memory_ratio_derived"] == "1:4"
    page = client.get(f"{API}/results/?flavor=rds.mysql.s2.xlarge&fields=id&fields=memory_ratio_derived&fields=qps_normalised").json()
    assert page["results"] == [{"id": alibaba["id"], "memory_ratio_derived": "1:4", "qps_normalised": alibaba["qps_normalised"]}]
    csv = client.get(f"{API}/results/csv/?document=huawei-2023-08-03-rds&vcpus=1&memory_gb=2&fields=id&fields=qps_normalised")
    assert f"{row['id']},2826.00" in b"".join(csv.streaming_content).decode().splitlines()


def test_the_sizing_target_says_per_minute_for_tpm(client):
    schema = client.get(f"{API}/schema/?format=json").json()
    target = next(p for p in schema["paths"]["/api/v1/sizing/"]["get"]["parameters"] if p["name"] == "target")
    assert "tpm: TPC-C transactions per minute, at or above" in target["description"]  # the declared unit
    answer = client.get(f"{API}/sizing/?engine=sqlserver&metric=tpm&target=100000").json()
    assert answer["unit"] == "TPC-C transactions per minute"


def test_a_format_a_json_endpoint_lacks_names_only_accepted_formats(client):
    response = client.get(f"{API}/spec/?engine=mysql&version=8.0&family=dedicated&vcpus=16&memory_gb=64&format=csv")
    assert response.status_code == 400
    assert response.json()["errors"]["format"] == ["Unknown format 'csv'; accepted: json."]
    assert client.get(f"{API}/spec/?engine=mysql&version=8.0&family=dedicated&vcpus=16&memory_gb=64&format=api").status_code == 400


@pytest.mark.parametrize("query,parameter,message", [
    ("engine=MySQL", "engine", "Unknown engine 'MySQL'. Did you mean 'mysql'?"),
    ("vendor=Huawei", "vendor", "Unknown vendor 'Huawei'. Did you mean 'huawei'?"),
    ("family=通用型", "family", "Unknown instance family '通用型'. Did you mean 'general'?"),
    ("family=鲲鹏通用增强型", "family", "Unknown instance family '鲲鹏通用增强型'. Did you mean 'kunpeng-general-enhanced'?"),
    ("engine=oracle", "engine", "Unknown engine 'oracle'."),
])
def test_a_name_or_a_slug_in_another_case_gets_a_hint(client, query, parameter, message):
    response = client.get(f"{API}/results/?{query}")
    assert response.status_code == 400
    assert response.json()["errors"] == {parameter: [message]}


def test_the_spec_lookup_hints_too(client):
    response = client.get(f"{API}/spec/?engine=MySQL&version=8.0&family=独享型&vcpus=16&memory_gb=64")
    assert response.status_code == 400
    assert response.json()["errors"] == {"engine": ["Unknown engine 'MySQL'. Did you mean 'mysql'?"],
                                         "family": ["Unknown instance family '独享型'. Did you mean 'dedicated'?"]}


# --- Point 3: one rate-limit count per client, whatever process answers ------------------------------

TOKENS_IN_SQLITE = """
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
for name in ("operator-a", "operator-b"):
    print(Token.objects.create(user=User.objects.create_user(name)).key)
"""


@pytest.fixture(params=["redis", "database", "sqlite"])
@tier("slow")  # gunicorn processes of its own
def two_servers(request, transactional_db, tmp_path, operator_user, staff_user):
    """Two gunicorn processes (config.gunicorn_conf, one worker each): the rate limit's count in Redis (REDIS_URL
    set), on PostgreSQL without Redis in the database's cache table (`migrate` creates it under that configuration;
    the test database was migrated with Redis, so the same command the migration runs creates it here), or on the
    embedded default (SQLite, no Redis: issue 52.14) in its SQLite file beside the database (config/rate_counter.py),
    repeated answers coming from AnswerMiddleware's memory. Yields both URLs and two tokens of the servers' database."""
    env = server_env(API_ANON_RATE="10/hour", API_AUTHENTICATED_RATE="20/hour")
    if request.param == "redis":
        env["REDIS_URL"] = os.environ["REDIS_URL"]  # the test's own Redis database, cleared before each test
    else:
        env.pop("REDIS_URL", None)
        env.pop("CELERY_BROKER_URL", None)
    if request.param == "sqlite":  # a copy of the session's migrated SQLite file (conftest migrated_sqlite)
        env["DATABASE_URL"] = f"sqlite:///{copy_of(request.getfixturevalue('migrated_sqlite'), tmp_path)}"
        tokens = subprocess.run([sys.executable, "manage.py", "shell", "-c", TOKENS_IN_SQLITE], cwd=ROOT, env=env,
                                check=True, capture_output=True, text=True).stdout.split()[-2:]
    else:
        if request.param == "database":
            subprocess.run([sys.executable, "manage.py", "createcachetable"], cwd=ROOT, env=env, check=True)
            with connection.cursor() as cursor:
                cursor.execute("DELETE FROM api_rate_limit")  # counts of an earlier run of this test
        tokens = [Token.objects.create(user=operator_user).key, Token.objects.create(user=staff_user).key]
    with gunicorn(env, tmp_path / "gunicorn-a.log") as a, gunicorn(env, tmp_path / "gunicorn-b.log") as b:
        yield a, b, tokens


def test_the_rate_limit_is_one_count_per_client_across_processes(two_servers):
    import requests

    a, b, (first, second) = two_servers
    anonymous = [requests.get(f"{(a, b)[i % 2]}{API}/vendors/", timeout=30) for i in range(6)]
    assert [r.status_code for r in anonymous] == [200] * 6
    assert {r.headers["X-RateLimit-Limit"] for r in anonymous} == {"10"}
    # Each process answers in turn, and the one count goes down by one each time.
    assert [int(r.headers["X-RateLimit-Remaining"]) for r in anonymous] == [9, 8, 7, 6, 5, 4]
    assert all(0 < int(r.headers["X-RateLimit-Reset"]) <= 3600 for r in anonymous)

    # A token is a client of its own (its own count, its own rate), however it is sent.
    token_answers = [requests.get(f"{url}{API}/vendors/", headers={"Authorization": f"{scheme} {first}"}, timeout=30)
                     for url, scheme in ((a, "Bearer"), (b, "Token"), (a, "Token"))]
    assert [(r.headers["X-RateLimit-Limit"], r.headers["X-RateLimit-Remaining"]) for r in token_answers] == [
        ("20", "19"), ("20", "18"), ("20", "17")]
    other = requests.get(f"{b}{API}/vendors/", headers={"Authorization": f"Bearer {second}"}, timeout=30)
    assert other.headers["X-RateLimit-Remaining"] == "19"

    # The anonymous count went on where it was, and runs out at the advertised limit, not a multiple of it.
    rest = [requests.get(f"{(a, b)[i % 2]}{API}/vendors/", timeout=30) for i in range(5)]
    assert [(r.status_code, r.headers["X-RateLimit-Remaining"]) for r in rest] == [
        (200, "3"), (200, "2"), (200, "1"), (200, "0"), (429, "0")]
    assert int(rest[-1].headers["Retry-After"]) > 0


# --- Point 8 (first half): updated_since and the Atom feed ---------------------------------------------

def _iso(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_updated_since_lists_what_changed_after_a_moment(client):
    from django.utils import timezone

    from whitepaper.models import PublishedResult

    before = timezone.now()
    everything = client.get(f"{API}/results/?updated_since={_iso(before)}").json()
    assert everything["count"] == 0  # nothing changed since
    # An edit (admin or shell) of one row: that row, and its document, are what changed.
    result = PublishedResult.objects.select_related("table__document").filter(tps__isnull=False).order_by("id").first()
    result.tps += 1
    result.save()
    changed = client.get(f"{API}/results/?updated_since={_iso(before)}").json()
    assert [r["id"] for r in changed["results"]] == [result.pk]
    assert changed["results"][0]["updated_at"] >= _iso(before)[:19]
    documents = client.get(f"{API}/documents/?updated_since={_iso(before)}").json()
    assert [d["slug"] for d in documents["results"]] == [result.table.document.slug]
    later = timezone.now()
    assert client.get(f"{API}/results/?updated_since={_iso(later)}").json()["count"] == 0
    assert client.get(f"{API}/documents/?updated_since={_iso(later)}").json()["count"] == 0


@pytest.mark.parametrize("path", [f"{API}/results/", f"{API}/documents/"])
def test_a_bad_updated_since_is_a_400_naming_it(client, path):
    response = client.get(f"{path}?updated_since=yesterday")
    assert response.status_code == 400 and set(response.json()["errors"]) == {"updated_since"}


def test_the_atom_feed_lists_documents_and_published_measurements(client):
    import xml.etree.ElementTree as ET

    from whitepaper.models import Document

    response = client.get("/feed/")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/atom+xml")
    ns = {"atom": "http://www.w3.org/2005/Atom"}
    feed = ET.fromstring(response.content)
    entries = feed.findall("atom:entry", ns)
    links = {e.find("atom:link", ns).get("href") for e in entries}
    # Every vendor document (edition) of the bundled catalogue, by its page.
    for document in Document.objects.exclude(vendor__slug="internal"):
        assert f"http://testserver/documents/{document.slug}/" in links
    newest = Document.objects.exclude(vendor__slug="internal").order_by("-changed_at").first()
    titles = [e.find("atom:title", ns).text for e in entries]
    assert any(newest.title in t for t in titles)
    assert client.get("/api/v1/").status_code == 200  # the feed is named from the API root too
    assert client.get("/api/v1/").json()["feed"] == "http://testserver/feed/"


def test_a_published_measurement_is_in_the_feed_first(client, staff_user, mysql_target, profiles):
    import xml.etree.ElementTree as ET

    from runs.models import Run, RunState

    profile = profiles["sysbench-oltp-rw-mysql-quick"]
    mysql_target.vcpus, mysql_target.memory_gb = 2, 4
    mysql_target.save()
    run = Run.objects.create(target=mysql_target, profile=profile, params=profile.resolve({}), requested_by=staff_user,
                             state=RunState.SUCCEEDED, server_version="10.11.19-MariaDB-0+deb12u1", tool_version="1.0.20",
                             summary={"tps": 812.345, "qps": 16246.9, "transactions": 2437, "threads": 2})
    client.force_login(staff_user)
    assert client.post(f"/runs/{run.pk}/publish/").status_code == 302
    client.logout()
    feed = ET.fromstring(client.get("/feed/").content)
    ns = {"atom": "http://www.w3.org/2005/Atom"}
    first = feed.find("atom:entry", ns)
    assert first.find("atom:title", ns).text.startswith("Internal measurement: ")
    assert first.find("atom:title", ns).text.endswith("2 vCPU / 4 GB: 812.35 TPS")
    assert "origin: internal" in first.find("atom:summary", ns).text


def test_the_atom_feed_has_authors_published_dates_and_stable_tag_ids(client, settings):
    """Issue 52.12: RFC 4287 requires an author (the feed's, and each document's vendor); a document's entry has its
    publication date as `published`; entry ids are tag URIs (RFC 4151) from slugs, not database keys."""
    import re
    import xml.etree.ElementTree as ET

    from whitepaper.models import Document

    settings.FEED_TAG_AUTHORITY = "perf.example.com"
    ns = {"atom": "http://www.w3.org/2005/Atom"}
    feed = ET.fromstring(client.get("/feed/").content)
    assert feed.find("atom:author/atom:name", ns).text == "RDS performance dashboard"
    entries = {e.find("atom:link", ns).get("href"): e for e in feed.findall("atom:entry", ns)}
    document = Document.objects.get(slug="huawei-2018-12-11-rds")  # published 2018-12-11 (its data file)
    entry = entries[f"http://testserver/documents/{document.slug}/"]
    assert entry.find("atom:id", ns).text == "tag:perf.example.com,2026:document:huawei-2018-12-11-rds"
    assert entry.find("atom:published", ns).text.startswith("2018-12-11T00:00:00")
    assert entry.find("atom:author/atom:name", ns).text == document.vendor.name
    for e in entries.values():
        assert re.fullmatch(r"tag:perf\.example\.com,2026:(document|result):[-a-z0-9:]+", e.find("atom:id", ns).text)
