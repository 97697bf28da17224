"""Error answers that say what is wrong (issue 52.13): each message names the real fault, in the one error shape."""

import json

import pytest

pytestmark = pytest.mark.django_db


def error(response, status):
    assert response.status_code == status, response.content[:500]
    body = response.json()
    assert set(body) == {"detail", "code", "errors"}, body
    return body


def test_a_json_array_body_is_refused_as_not_an_object(staff):
    body = error(staff.post("/api/v1/runs/", data=json.dumps([1]), content_type="application/json"), 400)
    assert body["detail"] == "The request body must be a JSON object (its fields by name), not an array."
    assert "non_field_errors" not in body["errors"]


def test_a_too_large_sizing_target_says_how_large_it_may_be(client):
    # The form's figure: DecimalField(max_digits=16, decimal_places=2): at most 99,999,999,999,999.99.
    body = error(client.get("/api/v1/sizing/?engine=mysql&target=1e300"), 400)
    assert body["errors"]["target"] == ["Too large: at most 99,999,999,999,999.99."]


def test_a_customer_reading_schedules_is_told_who_may_read_them(customer):
    body = error(customer.get("/api/v1/schedules/"), 403)
    assert body["detail"] == "Schedules are for staff and benchmark operators (reading); only staff change them."


def test_compare_with_an_unknown_parameter_names_that_parameter_not_run(staff):
    body = error(staff.get("/api/v1/runs/compare/?ids=abc"), 400)
    assert set(body["errors"]) == {"ids"}


def test_runs_schedules_and_samples_404s_name_the_thing(staff):
    assert error(staff.get("/api/v1/runs/999999/"), 404)["detail"] == "No run at /api/v1/runs/999999/."
    assert error(staff.get("/api/v1/runs/999999/samples/"), 404)["detail"] == "No run at /api/v1/runs/999999/samples/."
    assert error(staff.get("/api/v1/schedules/999999/"), 404)["detail"] == "No schedule at /api/v1/schedules/999999/."


@pytest.mark.parametrize("value", ["-0", "-0.0", "%20100", "100%20"])
def test_a_number_with_a_sign_or_spaces_is_refused_as_the_message_says(client, value):
    body = error(client.get(f"/api/v1/results/?min_tps={value}"), 400)
    assert "no sign" in body["errors"]["min_tps"][0]


def test_parquet_is_not_gzipped_again_and_takes_no_bom(client):
    response = client.get("/api/v1/results/parquet/?engine=mysql", HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200
    assert "Content-Encoding" not in response
    content = b"".join(response.streaming_content) if response.streaming else response.content
    assert content[:4] == b"PAR1"
    assert set(error(client.get("/api/v1/results/parquet/?bom=true"), 400)["errors"]) == {"bom"}
    assert set(error(client.get("/api/v1/results/?format=parquet&bom=true"), 400)["errors"]) == {"bom"}
    assert client.get("/api/v1/results/csv/?bom=true&engine=mysql").status_code == 200
