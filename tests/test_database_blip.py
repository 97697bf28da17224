"""A blip of the dashboard's database while a request is in flight (issue 34.4): its connection is really
terminated (pg_terminate_backend, from another connection, just before the view's query) and the answer is a 503
with Retry-After, JSON under /api/ and a page elsewhere, never a 500; the next request is answered as usual."""

from contextlib import contextmanager

import psycopg
import pytest
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def connection_terminated_before(table):
    """The first query that reads `table` finds its connection terminated by the server."""
    done = []

    def terminate_first(execute, sql, params, many, context):
        if table in sql and not done:
            done.append(True)
            pid = context["connection"].connection.info.backend_pid
            with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        return execute(sql, params, many, context)

    with connection.execute_wrapper(terminate_first):
        yield done


def test_it_answers_the_api_with_a_json_503_and_retry_after(operator_api, profiles):
    with connection_terminated_before("runs_benchmarkprofile") as done:
        response = operator_api.get("/api/v1/profiles/")
    assert done
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == "database_unavailable" and response.json()["retry_after"] == 5
    assert operator_api.get("/api/v1/profiles/").status_code == 200  # reconnected


def test_it_answers_a_page_with_a_503_and_retry_after(operator, profiles):
    with connection_terminated_before("runs_run") as done:
        response = operator.get("/runs/")
    assert done
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "try again in 5 seconds" in response.content.decode()
    assert operator.get("/runs/").status_code == 200


def test_an_anonymous_catalogue_answer_is_a_json_503_too(client):
    """The catalogue stamp read before the stack (whitepaper.api.caching.AnswerMiddleware, issue 52.14) on a
    terminated connection: the full stack answers, with its 503, not a 500."""
    assert client.get("/api/v1/vendors/").status_code == 200  # kept: the repeat is answered before the stack
    with connection_terminated_before("whitepaper_document") as done:
        response = client.get("/api/v1/vendors/")
    assert done
    assert response.status_code == 503 and response.json()["code"] == "database_unavailable"
    assert client.get("/api/v1/vendors/").status_code == 200
