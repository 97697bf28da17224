"""Every answer under /api/ is JSON in the one error shape (issue 25.5): a request line past gunicorn's limit,
a path missing its trailing slash, a bad Host header, and the deprecated 300 of the spec lookup. Before,
gunicorn answered 414 with its HTML page (its limit, 4,094 bytes, refused long filters), Django a 301 with an
HTML content type (an HTML 500 for a POST with DEBUG on) and a 400 page, and the 300 had no code/errors."""

import os
from pathlib import Path

import pytest
import requests

from .gunicorn_support import gunicorn, server_env
from .tiers import tier

pytestmark = pytest.mark.django_db

API = "/api/v1"
ROOT = Path(__file__).resolve().parent.parent
AMBIGUOUS = {"engine": "mysql", "version": "5.7", "family": "general", "vcpus": 4, "memory_gb": 16}


def assert_error_shape(response, status, code):
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) >= {"detail", "code", "errors"} and body["code"] == code and body["errors"] == {}
    return body


@pytest.mark.parametrize("method, status", [("get", 301), ("head", 301), ("post", 308), ("delete", 308)])
def test_a_missing_trailing_slash_is_answered_in_json(client, method, status):
    response = getattr(client, method)(f"{API}/results?engine=mysql")
    assert response.status_code == status
    assert response["Location"] == f"{API}/results/?engine=mysql"
    if method != "head":
        assert assert_error_shape(response, status, "trailing_slash")["location"] == f"{API}/results/?engine=mysql"


def test_following_the_slash_redirect_reaches_the_endpoint(client):
    response = client.get(f"{API}/vendors", follow=True)
    assert response.status_code == 200 and response.redirect_chain == [(f"{API}/vendors/", 301)]


def test_a_bad_host_header_is_json(client):
    assert_error_shape(client.get(f"{API}/vendors/", HTTP_HOST="evil.example"), 400, "bad_request")
    assert client.get("/", HTTP_HOST="evil.example")["Content-Type"].startswith("text/html")  # pages keep theirs


def test_the_deprecated_300_has_the_one_error_shape(client):
    response = client.get(f"{API}/spec/", {**AMBIGUOUS, "multiple_choices": "true"})
    assert response.status_code == 300
    body = response.json()
    assert body["code"] == "multiple_choices" and set(body["errors"]) == set(body["disambiguate_by"])
    assert body["errors"]["vendor"] == ["Several values match: alibaba, huawei; give one."]
    assert {c["vendor"] for c in body["candidates"]} == {"alibaba", "huawei"}


@pytest.fixture
@tier("slow")  # gunicorn processes of its own
def gunicorn_server(django_db_setup, tmp_path):
    """The dashboard's gunicorn command (config.gunicorn_conf) on the test database."""
    env = server_env(REDIS_URL=os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15"))
    with gunicorn(env, tmp_path / "gunicorn.log", ready_path=f"{API}/vendors/") as url:
        yield url


def test_long_filters_pass_and_a_request_line_past_the_limit_is_a_json_414(gunicorn_server):
    # Repeated values of a list filter, 6,000+ bytes: past gunicorn's default 4,094, inside the new 8,190.
    long_filter = "&".join(["engine=mysql"] * 500)
    response = requests.get(f"{gunicorn_server}{API}/results/?page_size=1&{long_filter}", timeout=60)
    assert response.status_code == 200 and response.json()["results"][0]["engine"] == "mysql"

    too_long = requests.get(f"{gunicorn_server}{API}/results/?" + "&".join(["engine=mysql"] * 700), timeout=60)
    assert too_long.status_code == 414 and too_long.headers["Content-Type"] == "application/json"
    body = too_long.json()
    assert body["code"] == "request_line_too_long" and body["errors"] == {} and "8190" in body["detail"]


def test_an_oversized_body_is_a_413_in_the_one_shape(client):
    body = b"{" + b" " * (1024 * 1024) + b"}"
    response = client.post(f"{API}/runs/", body, content_type="application/json")
    assert_error_shape(response, 413, "payload_too_large")


@pytest.mark.parametrize("debug", [False, True])
def test_a_crash_under_the_api_is_a_json_500(debug):
    from django.test import Client
    from django.test.utils import override_settings

    with override_settings(DEBUG=debug, ROOT_URLCONF="tests.boom_urls"):
        response = Client(raise_request_exception=False).get(f"{API}/boom/")
    body = assert_error_shape(response, 500, "error")
    assert "RuntimeError" not in body["detail"] and "Traceback" not in response.content.decode()
