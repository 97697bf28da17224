"""Cursors are opaque and signed; a forged, edited or random cursor, and random values of every other encoded
parameter (compare's `sel`, `ordering`, `fields`), are a JSON 400 naming the parameter, never a 500 (issue 25.1).
schemathesis cannot build these values, so they are fuzzed here."""

import base64
import json
from urllib.parse import parse_qs, quote, urlparse

import pytest
from django.core import signing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

API = "/api/v1"
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def readable(payload):
    """A cursor in the readable format the API used before 2.1.0 (base64 of JSON), as a forger would write it."""
    return base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode().rstrip("=")


def assert_json_400(response, name):
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json")
    assert name in response.json()["errors"]


def real_cursor(client, ordering):
    first = client.get(f"{API}/results/?ordering={ordering}&pagination=cursor&page_size=3").json()
    return parse_qs(urlparse(first["next"]).query)["cursor"][0]


@pytest.mark.django_db
@pytest.mark.parametrize("ordering, values", [
    ("-tps", ["100", "x"]), ("-tps", ["abc", 1]),
    *[("-published", ["2023-02-30", *[1] * n]) for n in range(0, 5)],
    *[("-published", ["not a date", *["x"] * n]) for n in range(0, 5)],
])
def test_it_refuses_a_forged_cursor_with_a_json_400(client, ordering, values):
    forged = readable({"o": [ordering], "v": values})
    assert_json_400(client.get(f"{API}/results/?ordering={ordering}&pagination=cursor&cursor={forged}"), "cursor")


@pytest.mark.django_db
def test_it_refuses_an_edited_or_foreign_cursor(client):
    cursor = real_cursor(client, "-tps")
    # The genuine one is followed ...
    assert client.get(f"{API}/results/?ordering=-tps&pagination=cursor&page_size=3&cursor={cursor}").status_code == 200
    # ... every edit of it is refused: a character changed anywhere, cut short, lengthened.
    for i in range(0, len(cursor), max(1, len(cursor) // 25)):
        edited = cursor[:i] + ("A" if cursor[i] != "A" else "B") + cursor[i + 1:]
        assert_json_400(client.get(f"{API}/results/?ordering=-tps&pagination=cursor&cursor={quote(edited)}"), "cursor")
    for edited in (cursor[:-1], cursor[: len(cursor) // 2], cursor + "A", ""):
        assert_json_400(client.get(f"{API}/results/?ordering=-tps&pagination=cursor&cursor={quote(edited)}"), "cursor")
    # Signed with the site's key for another purpose: not a cursor.
    foreign = signing.dumps({"o": ["-tps"], "v": [1, 1]}, salt="another.purpose", compress=True)
    assert_json_400(client.get(f"{API}/results/?ordering=-tps&pagination=cursor&cursor={foreign}"), "cursor")


@pytest.mark.django_db
@FUZZ
@given(token=st.text(min_size=0, max_size=200))
def test_any_text_as_a_cursor_is_a_json_400(client, token):
    assert_json_400(client.get(f"{API}/results/", {"ordering": "-published", "pagination": "cursor", "cursor": token}),
                    "cursor")


@pytest.mark.django_db
@FUZZ
@given(name=st.sampled_from(["sel", "ordering", "fields"]), value=st.text(max_size=120))
def test_any_text_in_an_encoded_parameter_is_answered_in_json_never_a_500(client, name, value):
    path = f"{API}/compare/" if name == "sel" else f"{API}/results/"
    params = {name: value, **({"sel": ["1", value]} if name == "sel" else {})}
    response = client.get(path, params)
    assert response.status_code in (200, 400, 404), (response.status_code, value)
    assert response["Content-Type"].startswith("application/json")
    if response.status_code == 400:
        assert response.json()["errors"] or response.json()["detail"]
