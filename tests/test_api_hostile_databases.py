"""Hostile requests answered alike on PostgreSQL (the test database, in-process) and on the embedded default
(SQLite, in a subprocess): a 400 in the API's one error shape naming the parameter or field at fault, never a
500 (issue 52). Ids and moments are checked against the range both databases hold: ids 0 to 2^63 - 1 (a
bigint), moments that are still a date-time in UTC (years 1 to 9999)."""

import json
from urllib.parse import urlencode

import pytest

BIG = str(2**63)  # one past the largest bigint
EARLY = "0001-01-01T00:00:00%2B14:00"  # 0000-12-31T10:00Z: before year 1 in UTC
LATE = "9999-12-31T23:59:59-14:00"  # 10000-01-01T13:59:59Z: after year 9999 in UTC
FORM = "application/x-www-form-urlencoded"
JSON = "application/json"

# (who, method, url, body, content type, the parameter or field the 400 names)
HOSTILE = [
    ("anonymous", "get", f"/api/v1/compare/?sel={BIG}&sel=2", None, None, "sel"),
    ("anonymous", "get", f"/api/v1/results/?updated_since={LATE}", None, None, "updated_since"),
    ("anonymous", "get", f"/api/v1/documents/?updated_since={LATE}", None, None, "updated_since"),
    ("anonymous", "get", f"/api/v1/results/?updated_since={EARLY}", None, None, "updated_since"),
    ("anonymous", "get", f"/api/v1/results/csv/?updated_since={EARLY}", None, None, "updated_since"),
    ("anonymous", "get", f"/api/v1/results/?format=csv&updated_since={LATE}", None, None, "updated_since"),
    ("staff", "get", f"/api/v1/runs/?target={BIG}", None, None, "target"),
    ("staff", "get", f"/api/v1/runs/?repeat_group={BIG}", None, None, "repeat_group"),
    ("staff", "get", f"/api/v1/runs/?schedule={BIG}", None, None, "schedule"),
    ("staff", "get", f"/api/v1/runs/?published_result={BIG}", None, None, "published_result"),
    ("staff", "get", f"/api/v1/runs/compare/?run={BIG}&run=2", None, None, "run"),
    ("staff", "get", f"/api/v1/runs/regressions/?target={BIG}", None, None, "target"),
    # 52.4: JSON inside a form field is held to API_MAX_JSON_DEPTH (32) like a JSON body: 5,000 levels were a
    # RecursionError, 33 a value stored.
    *[("staff", "post", path, urlencode({"overrides": overrides}), FORM, "overrides")
      for path in ("/api/v1/schedules/", "/api/v1/runs/") for overrides in ("[" * 5000, "[" * 33 + "]" * 33)],
    # 52.8: the runs API knows its parameters and fields: an unknown one is a 400 naming it, not ignored.
    ("staff", "get", "/api/v1/runs/?bogus=1", None, None, "bogus"),
    ("staff", "get", "/api/v1/runs/?stat=failed", None, None, "stat"),
    ("staff", "get", "/api/v1/runs/?ordering=bogus", None, None, "ordering"),
    ("staff", "get", "/api/v1/runs/regressions/?bogus=1", None, None, "bogus"),
    ("staff", "get", "/api/v1/runs/compare/?run=1&run=2&bogus=1", None, None, "bogus"),
    ("staff", "get", "/api/v1/runs/1/?bogus=1", None, None, "bogus"),
    ("staff", "get", "/api/v1/targets/?bogus=1", None, None, "bogus"),
    ("staff", "get", "/api/v1/profiles/?bogus=1", None, None, "bogus"),
    ("staff", "get", "/api/v1/schedules/?bogus=1", None, None, "bogus"),
    ("staff", "get", "/api/v1/schedules/?ordering=bogus", None, None, "ordering"),
    ("staff", "post", "/api/v1/runs/", json.dumps({"target": 1, "profile": "sysbench-oltp-rw-quick", "repeat": 3}), JSON,
     "repeat"),
    ("staff", "post", "/api/v1/schedules/", json.dumps({"name": "n", "bogus": 1}), JSON, "bogus"),
    ("staff", "post", "/api/v1/runs/", urlencode({"target": 1, "bogus": 1}), FORM, "bogus"),
    ("staff", "get", f"/api/v1/runs/series/?target={BIG}&profile=x", None, None, "target"),
]


def check(answers):
    problems = []
    for (who, method, url, _body, _type, field), (status, text) in zip(HOSTILE, answers, strict=True):
        body = json.loads(text) if text.startswith("{") else {}
        if status != 400 or set(body) != {"detail", "code", "errors"} or field not in body["errors"]:
            problems.append(f"{who} {method.upper()} {url}: {status} {text[:300]}")
    assert not problems, "\n".join(problems)


@pytest.mark.django_db
def test_hostile_requests_are_400s_naming_the_field_on_postgresql(anonymous, staff, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": "100000/minute",
                                                                                     "authenticated": "100000/minute"}}
    clients = {"anonymous": anonymous, "staff": staff}
    answers = []
    for who, method, url, body, content_type, _field in HOSTILE:
        client = clients[who]
        if method == "get":
            response = client.get(url)
        else:
            response = getattr(client, method)(url, data=body, content_type=content_type)
        content = b"".join(response.streaming_content) if response.streaming else response.content
        answers.append((response.status_code, content.decode()))
    check(answers)


def test_hostile_requests_are_400s_naming_the_field_on_the_embedded_sqlite_default(embedded_sqlite):
    check(embedded_sqlite.ask([r[:5] for r in HOSTILE]))


def test_the_embedded_default_still_answers_good_moments_and_ids(embedded_sqlite):
    """The range check refuses only what neither database can hold: year 1 and 9999 in UTC still answer (442
    rows: every published row of the bundled catalogue, as `manage.py export_results` counts them)."""
    answers = embedded_sqlite.ask([
        ("anonymous", "get", "/api/v1/results/?updated_since=0001-01-01T00:00:00Z"),
        ("anonymous", "get", "/api/v1/results/?updated_since=9999-12-31T23:59:59Z"),
        ("staff", "get", f"/api/v1/runs/?target={2**63 - 1}"),
    ])
    assert [status for status, _ in answers] == [200, 200, 200]
    assert json.loads(answers[0][1])["count"] == 442
    assert json.loads(answers[1][1])["count"] == 0
    assert json.loads(answers[2][1])["count"] == 0
