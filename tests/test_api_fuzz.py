"""Property-based fuzzing of the published OpenAPI schema (schemathesis) against the real WSGI app and
the bundled catalogue: no 5xx, every response (status, content type, headers, body) conforms to the
schema, schema-valid input is accepted and schema-invalid input is rejected with a 4xx.

The schema is loaded inside the test (its enums come from the catalogue, so it needs the database);
each operation is driven through schemathesis' Hypothesis strategies, positive and negative, with a
small fixed budget so the whole run stays well under a minute."""

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

pytestmark = pytest.mark.django_db

SCHEMA_URL = "/api/v1/schema/?format=json"
CATALOGUE_PATH = r"^/api/v1/(vendors|documents|methodologies|engines|versions|families|flavors|results|spec)/"  # the runs API has its own tests
EXAMPLES = {GenerationMode.POSITIVE: 15, GenerationMode.NEGATIVE: 8}


@pytest.fixture
def catalogue_schema(db, settings):
    # The fuzzer sends hundreds of anonymous requests: lift the anonymous throttle for this test only.
    settings.REST_FRAMEWORK = {**django_settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": "100000/minute"}}
    # The real WSGI handler closes "old" connections around each request, which inside the test's
    # transaction means closing it; Django's own test client unhooks the same signal.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi(SCHEMA_URL, get_wsgi_application()).include(path_regex=CATALOGUE_PATH)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def test_catalogue_api_conforms_to_its_schema(catalogue_schema):
    operations = [result.ok() for result in catalogue_schema.get_all_operations()]
    labels = {f"{op.method.upper()} {op.path}" for op in operations}
    assert {"GET /api/v1/results/", "GET /api/v1/spec/", "GET /api/v1/vendors/{slug}/"} <= labels
    for operation in operations:
        for mode, examples in EXAMPLES.items():
            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def run(case):
                case.call_and_validate()

            try:
                run()
            except Unsatisfiable:
                # Nothing schema-invalid can be built (e.g. the only parameter is a free-form path key).
                assert mode is GenerationMode.NEGATIVE, operation.path
            except Exception as exc:
                raise AssertionError(f"{operation.method.upper()} {operation.path} ({mode}): {exc}") from exc
