"""The schema's example answers of the public operations (issue 25.7) are real answers of the bundled catalogue
(recorded by `python manage.py api_examples` into whitepaper/api/response_examples.json) and conform to the
schema of their response."""

import json

import pytest
from openapi_schema_validator import OAS30Validator, validate

pytestmark = pytest.mark.django_db

PUBLIC = ("/api/v1/runs/", "/api/v1/targets/", "/api/v1/profiles/", "/api/v1/schedules/")


def nullable_refs(node):
    """drf-spectacular writes a nullable object as {allOf: [{$ref}], nullable: true}, meant (as generators and
    schemathesis read it) as "the object or null"; openapi-schema-validator applies `nullable` to the outer
    schema only and then fails null against the allOf member. Spell that reading out for the validator."""
    if isinstance(node, list):
        return [nullable_refs(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: nullable_refs(v) for k, v in node.items()}
    if node.get("nullable") and "allOf" in node and "type" not in node:
        rest = {k: v for k, v in node.items() if k not in ("allOf", "nullable")}
        return {**rest, "anyOf": [{"allOf": node["allOf"]}, {"type": "object", "nullable": True, "enum": [None]}]}
    return node


def test_every_public_answer_has_an_example_that_conforms(client):
    schema = client.get("/api/v1/schema/?format=json").json()
    checked = 0
    for path, item in schema["paths"].items():
        if path.startswith(PUBLIC):
            continue
        for media, content in item["get"]["responses"]["200"]["content"].items():
            assert "example" in content, (path, media)
            if media == "application/json":
                validate(content["example"], nullable_refs({**content["schema"], "components": schema["components"]}),
                         cls=OAS30Validator)
            else:
                assert isinstance(content["example"], str) and content["example"], (path, media)
            checked += 1
    assert checked >= 24


def test_the_examples_are_the_catalogues_numbers(client):
    schema = client.get("/api/v1/schema/?format=json").json()
    spec = schema["paths"]["/api/v1/spec/"]["get"]["responses"]["200"]["content"]["application/json"]["example"]
    # huawei-2025-10-21-mysql.yaml: MySQL 8.0 dedicated 8 vCPU 64 GB, TPS 3102, QPS 62045.
    assert (spec["document"]["slug"], spec["result"]["tps"], spec["result"]["qps"]) == ("huawei-2025-10-21-mysql", 3102.0, 62045.0)
    csv = schema["paths"]["/api/v1/results/csv/"]["get"]["responses"]["200"]["content"]["text/csv"]["example"]
    assert csv.splitlines()[0].startswith("vendor,document,published,engine,version")
    assert json.dumps(schema).count("https://rds-perf.example/") > 10  # examples name an example host, not this one
