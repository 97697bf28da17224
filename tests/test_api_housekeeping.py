"""What a consumer expects of any HTTP API (issue 25.7): gzip when asked, ETag and Cache-Control on the schema,
the column dictionary and the API root, CORS that lets a browser revalidate (If-None-Match), no
`Vary: Accept-Language` on the English-only API, a request id on every answer, the changelog served and linked
from the schema, and Deprecation/Sunset on every use of something deprecated."""

import gzip
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db

API = "/api/v1"
ROOT = Path(__file__).resolve().parent.parent
UNIQUE = {"engine": "mysql", "version": "8.0", "family": "dedicated", "vcpus": "8", "memory_gb": "64"}


def test_json_and_csv_are_gzipped_when_asked(client):
    plain = client.get(f"{API}/results/", {"page_size": 500})
    packed = client.get(f"{API}/results/", {"page_size": 500}, HTTP_ACCEPT_ENCODING="gzip")
    assert "Content-Encoding" not in plain and packed["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(packed.content)) == plain.json()
    assert len(packed.content) * 5 < len(plain.content)  # numbers and repeated keys compress well
    csv_packed = client.get(f"{API}/results/csv/", HTTP_ACCEPT_ENCODING="gzip")
    assert csv_packed["Content-Encoding"] == "gzip"
    csv_plain = b"".join(client.get(f"{API}/results/csv/").streaming_content)
    assert gzip.decompress(b"".join(csv_packed.streaming_content)) == csv_plain
    # Anonymous catalogue pages are gzipped too since issue 36.9, pages with a session are not:
    # tests/test_page_compression.py.


@pytest.mark.parametrize("path", ["/schema/?format=json", "/schema/", "/results/columns/", "/", "/changelog/"])
def test_code_defined_answers_have_an_etag_and_revalidate(client, path):
    first = client.get(f"{API}{path}")
    assert first.status_code == 200 and first["ETag"].startswith('"')
    assert first["Cache-Control"] == "public, max-age=0, must-revalidate"
    again = client.get(f"{API}{path}", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == first["ETag"]
    assert client.get(f"{API}{path}", HTTP_IF_NONE_MATCH='"other"').status_code == 200


def test_cors_lets_a_browser_revalidate(client):
    preflight = client.options(f"{API}/results/", HTTP_ORIGIN="https://example.org",
                               HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET",
                               HTTP_ACCESS_CONTROL_REQUEST_HEADERS="if-none-match, x-request-id")
    allowed = {h.strip().lower() for h in preflight["Access-Control-Allow-Headers"].split(",")}
    assert {"if-none-match", "if-modified-since", "x-request-id"} <= allowed
    response = client.get(f"{API}/vendors/", HTTP_ORIGIN="https://example.org")
    assert "x-request-id" in response["Access-Control-Expose-Headers"].lower()


@pytest.mark.parametrize("path", ["/results/?page_size=1", "/spec/", "/nothing/", "/schema/"])
def test_the_english_only_api_does_not_vary_by_language(client, path):
    response = client.get(f"{API}{path}", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "accept-language" not in response.get("Vary", "").lower(), response.get("Vary")
    assert response["Content-Language"] == "en"
    assert "accept-language" in client.get("/", HTTP_ACCEPT_LANGUAGE="zh-hans")["Vary"].lower()  # pages do


def test_every_answer_carries_a_request_id(client):
    answers = [client.get(f"{API}/vendors/"), client.get(f"{API}/nothing/"), client.get(f"{API}/results/?min_tps=x"),
               client.get("/"), client.post(f"{API}/results/")]
    etag = answers[0]["ETag"]
    answers.append(client.get(f"{API}/vendors/", HTTP_IF_NONE_MATCH=etag))
    assert [a.status_code for a in answers] == [200, 404, 400, 200, 405, 304]
    ids = [a["X-Request-ID"] for a in answers]
    assert len(set(ids)) == len(ids) and all(len(i) == 32 for i in ids)
    assert client.get(f"{API}/vendors/", HTTP_X_REQUEST_ID="trace-42.a")["X-Request-ID"] == "trace-42.a"
    replaced = client.get(f"{API}/vendors/", HTTP_X_REQUEST_ID="<script>")["X-Request-ID"]
    assert replaced != "<script>" and len(replaced) == 32


def test_the_changelog_is_served_and_linked_from_the_schema(client):
    response = client.get(f"{API}/changelog/")
    assert response.status_code == 200 and response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response.content == (ROOT / "docs" / "API-CHANGELOG.md").read_bytes()
    schema = client.get(f"{API}/schema/?format=json").json()
    assert schema["externalDocs"]["url"] == "http://testserver/api/v1/changelog/"
    assert "http://testserver/api/v1/changelog/" in schema["info"]["description"]
    assert client.get(f"{API}/").json()["changelog"] == "http://testserver/api/v1/changelog/"
    # The newest section names the schema's version.
    assert f"## {schema['info']['version']} " in response.content.decode()


@pytest.mark.parametrize("params, status", [({**UNIQUE, "multiple_choices": "true"}, 200),
                                            ({**UNIQUE, "multiple_choices": "false"}, 200),
                                            ({**UNIQUE, "vcpus": "x", "multiple_choices": "true"}, 400),
                                            ({**UNIQUE, "vcpus": "7", "multiple_choices": "true"}, 404)])
def test_every_use_of_the_deprecated_parameter_is_marked(client, params, status):
    response = client.get(f"{API}/spec/", params)
    assert response.status_code == status
    assert response["Deprecation"].startswith("@") and response["Sunset"] == "Mon, 01 Mar 2027 00:00:00 GMT"
    plain = client.get(f"{API}/spec/", UNIQUE)
    assert not plain.has_header("Deprecation") and not plain.has_header("Sunset")
