"""Anonymous API answers served from a cache keyed by the catalogue stamp and the normalised query (issue 52.14),
like the pages: no query for the answer the second time, the same bytes, fresh after any write; the rate limit
and its headers work on cached answers as on any."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from whitepaper.models import PublishedResult

pytestmark = pytest.mark.django_db
API = "/api/v1"
ANSWERS = [f"{API}/results/?engine=mysql&ordering=-tps", f"{API}/results/?engine=mysql&format=csv",
           f"{API}/results/parquet/?engine=postgresql", f"{API}/documents/",
           f"{API}/spec/?engine=mysql&version=8.0&family=dedicated&vcpus=8&memory_gb=64",
           f"{API}/sizing/?engine=mysql&version=8.0&target=3000", f"{API}/flavors/?page_size=50"]


def body(response):
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.mark.parametrize("url", ANSWERS)
def test_a_second_anonymous_request_reads_nothing_and_gets_the_same_bytes(client, settings, url):
    first = client.get(url)
    assert first.status_code == 200
    with CaptureQueriesContext(connection) as queries:
        second = client.get(url)
    assert second.status_code == 200 and body(second) == body(first)
    assert second["Content-Type"] == first["Content-Type"] and second["ETag"] == first["ETag"]
    # One query: the catalogue stamp, read on every request (a write by any process makes the answer fresh).
    sql = [q["sql"] for q in queries.captured_queries if "api_rate_limit" not in q["sql"]]
    assert len(sql) == 1 and 'MAX("whitepaper_document"."changed_at")' in sql[0], sql


def test_the_query_is_normalised_and_a_write_makes_the_answer_fresh(client, settings):
    settings.CATALOGUE_STAMP_TTL = 0  # the test's transaction never commits: read the stamp each time
    first = client.get(f"{API}/results/?engine=mysql&version=8.0&family=dedicated&vcpus=8")
    with CaptureQueriesContext(connection) as queries:
        reordered = client.get(f"{API}/results/?vcpus=8&family=dedicated&version=8.0&engine=mysql")
    assert body(reordered) == body(first)
    assert len(queries) == 1  # the stamp only
    # Repeated parameters keep their order: another ordering is another answer.
    by_tps = client.get(f"{API}/results/?engine=mysql&ordering=-tps&ordering=vcpus").json()["results"]
    by_vcpus = client.get(f"{API}/results/?engine=mysql&ordering=vcpus&ordering=-tps").json()["results"]
    assert [r["id"] for r in by_tps] != [r["id"] for r in by_vcpus]
    row = PublishedResult.objects.get(pk=first.json()["results"][0]["id"])
    row.tps += 1
    row.save()  # every catalogue write moves the stamp
    fresh = client.get(f"{API}/results/?engine=mysql&version=8.0&family=dedicated&vcpus=8").json()["results"]
    assert fresh[0]["tps"] == float(row.tps)


def test_cached_answers_are_counted_by_the_rate_limit(client, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": "3/minute"}}
    seen = [(r.status_code, r["X-RateLimit-Remaining"]) for r in (client.get(f"{API}/documents/") for _ in range(4))]
    assert seen == [(200, "2"), (200, "1"), (200, "0"), (429, "0")]


def test_logged_in_and_token_answers_are_not_taken_from_the_cache(client, staff):
    anonymous = client.get(f"{API}/results/?engine=mysql&include_internal=true").json()
    assert staff.get(f"{API}/results/?engine=mysql&include_internal=true").json() == anonymous
    assert staff.get(f"{API}/results/?engine=mysql")["Cache-Control"] == "private, no-cache"


# --- The finished answer before the rest of the stack (AnswerMiddleware) ----------------------------------------

PER_REQUEST = {"Date", "X-Request-ID", "X-RateLimit-Remaining", "X-RateLimit-Reset"}


@pytest.mark.parametrize("url, headers", [
    (f"{API}/results/?engine=mysql&ordering=-tps", {}), (f"{API}/results/csv/?engine=ppas", {}),
    (f"{API}/results/csv/?engine=ppas&printed_cells=true", {}),  # its Deprecation and Sunset headers too
    (f"{API}/results/parquet/?engine=ppas", {}), (f"{API}/documents/", {"HTTP_ORIGIN": "https://analyst.example"}),
    (f"{API}/results/?engine=mysql", {"HTTP_ACCEPT": "text/csv"}),
])
def test_a_repeat_is_answered_before_drf_with_the_full_answers_bytes_and_headers(client, monkeypatch, settings, tmp_path,
                                                                                 url, headers):
    """Issue 52.14: a repeated anonymous request is answered from the process's finished answers, before the URL
    resolver and DRF (a third of a cached answer's CPU): the same bytes and headers, its own rate-limit count (here
    in the embedded default's file, config/rate_counter.py)."""
    from rest_framework.views import APIView

    settings.API_RATE_LIMIT_FILE = str(tmp_path / "db.sqlite3-rate-limit")
    first = client.get(url, **headers)
    dispatched = []
    original = APIView.dispatch
    monkeypatch.setattr(APIView, "dispatch", lambda self, *a, **k: dispatched.append(1) or original(self, *a, **k))
    second = client.get(url, **headers)
    assert not dispatched, "the repeat went through DRF"
    assert second.status_code == first.status_code == 200 and body(second) == body(first)
    assert second.streaming == first.streaming
    assert ({k: v for k, v in second.items() if k not in PER_REQUEST}
            == {k: v for k, v in first.items() if k not in PER_REQUEST})
    assert int(second["X-RateLimit-Remaining"]) == int(first["X-RateLimit-Remaining"]) - 1
    # Another Accept, Origin or query spelling is another answer (each kept once answered by the full stack).
    client.get(url + ("&" if "?" in url else "?") + "page_size=3" if "csv" not in url and "parquet" not in url else url,
               HTTP_ACCEPT="application/json")
    assert dispatched


def test_credentials_and_conditional_requests_take_the_full_stack(client, staff, monkeypatch):
    from rest_framework.views import APIView

    url = f"{API}/results/?engine=mysql"
    first = client.get(url)
    dispatched = []
    original = APIView.dispatch
    monkeypatch.setattr(APIView, "dispatch", lambda self, *a, **k: dispatched.append(1) or original(self, *a, **k))
    assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert staff.get(url).status_code == 200  # a session
    assert client.get(url, HTTP_AUTHORIZATION="Bearer nonsense").status_code == 401
    assert len(dispatched) == 3


def test_finished_answers_stay_within_their_bytes():
    from whitepaper.api.caching import FinishedAnswers

    kept = FinishedAnswers(size=10, max_bytes=800)
    for i in range(10):
        kept.set(i, (200, b"x" * 100, [], False))
    assert len(kept.items) == 8 and kept.held == 800 and kept.get(0) is None and kept.get(9) is not None
    kept.set("large", (200, b"x" * 101, [], False))  # over an eighth of the budget: not kept here
    assert kept.get("large") is None
    kept.set(9, (200, b"x" * 50, [], False))  # replaced: its old size given back
    assert kept.held == 750
