"""The API as analysts and integrators use it (issue 37): Bearer tokens beside Token, typed run settings,
absolute run URLs, the smaller consistency items, one rate-limit count per client, `updated_since` and the
Atom feed."""

import pytest
from rest_framework.authtoken.models import Token

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
