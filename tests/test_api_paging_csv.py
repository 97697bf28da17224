"""What a consumer pages and downloads with (issue 25.3, 25.4, part of 25.7): `Link` headers for every page
(rel next/prev/first/last, the body's URLs), the default list typed with every field required and the
`fields=` variant apart, the CSV as its own operation (`/results/csv/`, only its 200 is CSV), public reads
declaring no security, and a `?format=json` that does not leak into the URLs of the payload."""

import re

import pytest

pytestmark = pytest.mark.django_db

API = "/api/v1"


def links(response):
    return {rel: url for url, rel in re.findall(r'<([^>]+)>; rel="([^"]+)"', response.get("Link", ""))}


def test_numbered_pages_carry_link_headers_with_the_bodys_urls(client):
    first = client.get(f"{API}/results/", {"engine": "mysql", "page_size": 10})
    body = first.json()
    last_page = -(-body["count"] // 10)
    assert links(first) == {"next": body["next"], "first": "http://testserver/api/v1/results/?engine=mysql&page_size=10",
                            "last": f"http://testserver/api/v1/results/?engine=mysql&page={last_page}&page_size=10"}
    second = client.get(body["next"])
    assert links(second)["prev"] == second.json()["previous"] == links(first)["first"]
    assert links(second)["next"] == second.json()["next"]
    last = client.get(links(first)["last"])
    assert "next" not in links(last) and last.json()["next"] is None


def test_vocabulary_lists_carry_link_headers_too(client):
    response = client.get(f"{API}/documents/", {"page_size": 1})
    assert set(links(response)) == {"next", "first", "last"}


def test_cursor_pages_carry_link_next_until_the_end(client):
    url, seen, expected = f"{API}/results/?engine=postgresql&ordering=-tps&pagination=cursor&page_size=20", [], []
    all_rows = client.get(f"{API}/results/", {"engine": "postgresql", "ordering": "-tps", "page_size": 500}).json()
    expected = [r["id"] for r in all_rows["results"]]
    while url:
        response = client.get(url)
        body = response.json()
        seen += [r["id"] for r in body["results"]]
        assert links(response).get("next") == body["next"]
        url = links(response).get("next")
    assert seen == expected


def test_format_json_does_not_leak_into_payload_urls(client):
    for path in ("/results/?page_size=2&engine=mysql", "/vendors/", "/engines/", "/documents/?page_size=1", "/"):
        response = client.get(f"{API}{path}", {"format": "json"})
        assert response.status_code == 200, path
        assert "format=" not in response.content.decode(), path
        assert "format=" not in response.get("Link", ""), path


def test_the_csv_is_its_own_operation(client):
    via_format = client.get(f"{API}/results/", {"format": "csv", "engine": "mysql", "version": "8.0"})
    own = client.get(f"{API}/results/csv/", {"engine": "mysql", "version": "8.0"}, HTTP_ACCEPT="application/json")
    assert own.status_code == 200 and own["Content-Type"] == "text/csv; charset=utf-8"
    assert b"".join(own.streaming_content) == b"".join(via_format.streaming_content)
    assert links(own) == {"describedby": "http://testserver/api/v1/results/columns/"}
    bad = client.get(f"{API}/results/csv/", {"engine": "oracle", "page": "2", "format": "json"})
    assert bad.status_code == 400 and bad["Content-Type"] == "application/json"
    assert set(bad.json()["errors"]) == {"engine", "page", "format"}  # no pages, no other format here


def test_schema_types_the_default_list_fully_and_the_csv_and_public_reads(client):
    schema = client.get(f"{API}/schema/?format=json").json()
    components = schema["components"]["schemas"]
    operation = schema["paths"]["/api/v1/results/"]["get"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {"anyOf": [
        {"$ref": "#/components/schemas/PaginatedResultList"}, {"$ref": "#/components/schemas/PaginatedPartialResultList"}]}
    assert set(components["Result"]["required"]) == set(components["Result"]["properties"])
    assert "required" not in components["PartialResult"]
    assert components["PartialResult"]["properties"] == components["Result"]["properties"]
    csv_operation = schema["paths"]["/api/v1/results/csv/"]["get"]
    assert list(csv_operation["responses"]["200"]["content"]) == ["text/csv"]
    assert {list(r["content"]) == ["application/json"] for code, r in csv_operation["responses"].items()
            if code != "200"} == {True}
    public = [path for path in schema["paths"] if not path.startswith(("/api/v1/runs/", "/api/v1/targets/",
                                                                       "/api/v1/profiles/", "/api/v1/schedules/",
                                                                       "/api/v1/campaigns/"))]
    assert "/api/v1/spec/" in public and "/api/v1/results/csv/" in public
    for path in public:
        assert "security" not in schema["paths"][path]["get"], path
    assert schema["paths"]["/api/v1/runs/"]["get"]["security"]  # the runs API still needs a session or token
