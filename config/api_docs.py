"""Descriptions and examples the OpenAPI schema would otherwise lack (a schema post-processing hook):
every field of every component gets a description, every query parameter an example, every error response
an example body. Written once by name here, instead of a help_text repeated on thirty serializers; a field's
own help_text (the serializer's) always wins. tests/test_api_schema_docs.py keeps the schema complete."""

# Field name -> description (component-specific ones under (component, name)).
FIELDS = {
    "url": "This object's API URL.",
    "tls_mode": "How connections to the target are encrypted and verified: disable, require, verify-ca or verify-full "
                "(libpq's names; see the README for what each tool can verify).",
    "id": "Identifier, stable across re-imports.",
    "slug": "Identifier in URLs and filters (lower case, hyphens).",
    "name": "Name (English).",
    "name_zh": "Name as the documents print it (Chinese).",
    "arch": "CPU architecture of the family: x86 or arm (Kunpeng).",
    "vendor": "The vendor (API URL).",
    "vendor_slug": "The vendor's slug.",
    "engine": "The engine (slug or API URL).",
    "engine_slug": "The engine's slug.",
    "family": "The instance family (API URL); null when the document states none.",
    "family_slug": "The instance family's slug; null when the document states none.",
    "title_en": "The document's title in English (the printed title is `title`).",
    "edition": "The document's edition as printed (e.g. 01); empty when it gives none.",
    "language": "The document's language (zh-Hans).",
    "source_file": "The text file the document was transcribed from.",
    "methodologies": "The document's methodologies (API URLs).",
    "tables": "Tables: the document's tables (documents); tables in the test database (methodologies, profiles).",
    "client": "The benchmark client machine as the document describes it.",
    "tool_version": "Version of the benchmark tool.",
    "workload": "The workload run (e.g. oltp_read_write).",
    "document": "The document the row comes from.",
    "methodology": "How the number was measured.",
    "flavor": "The flavour (instance size) the row is about.",
    "table": "The table the row is printed in.",
    "printed": "The value exactly as the document prints it; null when it gives none.",
    "published": "The document's publication date (YYYY-MM-DD).",
    "value": "The metric's value (its unit: `unit`); null when not published.",
    "unit": "The unit of `value` (e.g. transactions/s).",
    "metric": "The metric answered (tps, qps, ...).",
    "target": "The value to reach, in the metric's unit.",
    "result": "The published result this row answers with.",
    "baseline": "Whether this row is the baseline of the comparison.",
    "selection": "Index of the selection (from 0).",
    "selections": "The selections compared, in the order given.",
    "caveats": "What the numbers do not tell by themselves (QPS definitions, methodology differences).",
    "difference_pct": "Percent difference against the baseline, one decimal; null when either value is missing.",
    "field": "The methodology field that differs.",
    "label": "The field's label in English.",
    "detail": "What went wrong, in a sentence.",
    "vcpus": "vCPUs (cores).",
    "memory_gb": "Memory in GB.",
    "count": "Matching objects.",
    "next": "The next page (null on the last); also in the Link header.",
    "previous": "The previous page (null on the first); also in the Link header.",
    "results": "This page's objects.",
    # runs
    "host": "Host name or address.",
    "port": "TCP port.",
    "database": "Database name on the target server.",
    "user": "User name on the target server.",
    "has_password": "Whether a password is stored (never shown).",
    "runnable": "Whether this dashboard's workers can run the profile's tool.",
    "tool": "The benchmark tool.",
    "duration_s": "Duration of one step, seconds.",
    "warmup_s": "Warm-up before each step's measurement, seconds.",
    "report_interval_s": "Interval between the tool's reports, seconds.",
    "rows_per_table": "Rows per test table.",
    "scale": "pgbench scale factor.",
    "range": "Range of the gaussian account id of the pgbench scripts.",
    "client_hosts": "Client hosts running the benchmark at once.",
    "threads": "Client threads (connections).",
    "state": "State of the run or client.",
    "created_at": "When it was created (ISO 8601).",
    "started_at": "When the run started (ISO 8601); null before.",
    "finished_at": "When the run finished (ISO 8601); null before.",
    "requested_by": "Who launched the run.",
    "cancel_requested": "Whether a cancel was asked for (the worker stops at its next check).",
    "client_host": "The client host that ran the tool.",
    "client_cores": "vCPUs of the client host.",
    "cores": "vCPUs of the client host.",
    "server_version": "The target server's version as it reports it.",
    "progress_percent": "Progress of the run phase, percent; null when not running.",
    "step": "The step (thread count of a sweep), from 1.",
    "step_count": "Steps of the run (thread counts of a sweep).",
    "summary": "The run's final numbers (TPS, QPS, latency...) per step; empty until it succeeds.",
    "retraction_reason": "Why a published run was retracted; empty otherwise.",
    "reason": "Why the client failed or was stopped; empty otherwise.",
    "run": "The run concerned.",
    "warmup": "Whether the interval belongs to the warm-up (not counted).",
    "tps": "Transactions per second in the interval.",
    "qps": "Queries per second in the interval.",
    "reads": "Read queries per second in the interval.",
    "writes": "Write queries per second in the interval.",
    "other": "Other queries (BEGIN, COMMIT...) per second in the interval.",
    "latency_avg_ms": "Average latency in the interval, milliseconds.",
    "latency_p95_ms": "95th percentile latency in the interval, milliseconds.",
    "errors_per_s": "Errors per second in the interval.",
    "reconnects_per_s": "Reconnects per second in the interval.",
    "received_at": "When the dashboard stored the interval line (ISO 8601).",
    "sampled_at": "When the worker read the server's counters (ISO 8601).",
    "rollbacks_per_s": "Rollbacks per second counted by the server.",
}
COMPONENT_FIELDS = {
    ("Document", "tables"): "The document's tables, in printed order.",
    ("CompareRevisedFrom", "change_pct"): "This figure against the older edition's, in % of the older one.",
    ("Profile", "tables"): "Tables in the test database.",
    ("RunOverrides", "tables"): "Tables in the test database.",
    ("Sizing", "engine"): "The engine slug asked for.",
    ("Target", "engine"): "The target's engine (slug).",
    ("Profile", "engine"): "The engine the profile runs against (slug).",
    ("EngineVersion", "engine"): "The engine (API URL).",
    ("Target", "vcpus"): "vCPUs of the target instance, as registered.",
    ("Target", "memory_gb"): "Memory of the target instance in GB, as registered.",
    ("SpecAnswer", "result"): "The newest document's row for the flavour.",
    ("FlavourRow", "result"): "The selection's result.",
    ("AlsoPrinted", "url"): "The older document's row (API URL).",
    ("AlsoPrinted", "id"): "The older document's row id.",
    ("SamplePage", "results"): "This page's interval lines.",
    ("ServerSamplePage", "results"): "This page's server readings.",
    ("CancelConflict", "run"): "The run as it is now.",
    ("CampaignCancelConflict", "campaign"): "The campaign as it is now.",
    ("CampaignPauseConflict", "campaign"): "The campaign as it is now.",
    ("CampaignEditionConflict", "campaign"): "The campaign as it is now.",
}

# Query parameter name -> an example value (parameters with an enum or a boolean take their first value).
PARAMETER_EXAMPLES = {
    "page": 2, "page_size": 50, "vcpus": 16, "min_vcpus": 8, "max_vcpus": 32, "memory_gb": 64, "min_memory_gb": 32,
    "max_memory_gb": 128, "target": 3000, "base": 0, "cursor": "(the `cursor` of a `next` URL)", "id": 1, "slug": "huawei",
    "vendor": "huawei", "engine": "mysql", "version": "8.0", "family": "dedicated", "document": "huawei-2023-08-03-rds",
    "methodology": "huawei-2023-08-03-rds-sysbench-mysql-c3", "memory_ratio": "1:4", "edition": "enterprise",
    "flavor": "mysql.x8.medium.2", "sel": ["1", "2"], "fields": ["id", "tps"], "ordering": ["-tps"],
    "updated_since": "2026-11-26T09:00:00Z",
    "latency_bound_ms": 50,  # sizing under a p95 bound (issue 35.5)
    # A metric's filters (tps, min_tps, max_tps ...) take theirs from its declaration (whitepaper/metrics.py
    # Metric.example), set by the catalogue's hook whitepaper.api.examples.metric_parameter_examples before this one.
}
# The runs API's parameters of the same names mean other things (target: a target's id; ordering: one field).
RUNS_PATHS = ("/api/v1/runs/", "/api/v1/targets/", "/api/v1/profiles/", "/api/v1/schedules/", "/api/v1/campaigns/")
RUNS_PARAMETER_EXAMPLES = {
    "page": 2, "page_size": 50, "id": 1, "run": 1, "group": 1, "base": "1", "include_disturbed": "false", "target": 1, "published_result": 1, "after": 0,
    "repeat_group": 1, "schedule": 1, "ordering": "-created_at", "profile": "sysbench-oltp-rw-mysql",
    "slug": "sysbench-oltp-rw-mysql",
}
# Path parameters of the catalogue: a key that exists in the bundled catalogue.
PATH_EXAMPLES = {
    ("/api/v1/documents/{slug}/", "slug"): "huawei-2023-08-03-rds", ("/api/v1/vendors/{slug}/", "slug"): "huawei",
    ("/api/v1/engines/{slug}/", "slug"): "mysql",
    ("/api/v1/methodologies/{slug}/", "slug"): "huawei-2023-08-03-rds-sysbench-mysql-c3",
    ("/api/v1/families/{vendor}/{slug}/", "vendor"): "huawei", ("/api/v1/families/{vendor}/{slug}/", "slug"): "dedicated",
    ("/api/v1/versions/{engine}/{version}/", "engine"): "mysql", ("/api/v1/versions/{engine}/{version}/", "version"): "8.0",
}

ERROR_EXAMPLES = {
    "400": {"detail": "Invalid parameters: min_tps.", "code": "invalid", "errors": {"min_tps": ["Enter a number."]}},
    "401": {"detail": "Authentication credentials were not provided.", "code": "not_authenticated", "errors": {}},
    "403": {"detail": "You do not have permission to perform this action.", "code": "permission_denied", "errors": {}},
    "404": {"detail": "No published result at /api/v1/results/999999/.", "code": "not_found", "errors": {}},
    "405": {"detail": "Method \"POST\" not allowed.", "code": "method_not_allowed", "errors": {}},
    "409": {"detail": "2 published variants match; add one of: vendor.", "code": "ambiguous",
            "errors": {"vendor": ["Several values match: alibaba, huawei; give one."]}},
    "413": {"detail": "The request body is 2000000 bytes; the limit is 1048576 bytes (API_MAX_BODY_BYTES).",
            "code": "payload_too_large", "errors": {}},
    "414": {"detail": "Request Line is too large (8191 > 8190)", "code": "request_line_too_long", "errors": {}},
    "429": {"detail": "Too many requests: try again in 12 seconds.", "code": "throttled", "errors": {},
            "retry_after": 12},
}


def _describe(schema, description):
    if "$ref" in schema:  # a $ref takes no siblings: wrap it
        ref = schema.pop("$ref")
        schema["allOf"] = [{"$ref": ref}]
    schema["description"] = description


def schema_docs(result, generator, request, public):
    for component, schema in result.get("components", {}).get("schemas", {}).items():
        for name, field in (schema.get("properties") or {}).items():
            if "description" not in field:
                text = COMPONENT_FIELDS.get((component, name)) or FIELDS.get(name)
                if text:
                    _describe(field, text)
    for path, path_item in result.get("paths", {}).items():
        by_name = RUNS_PARAMETER_EXAMPLES if path.startswith(RUNS_PATHS) else PARAMETER_EXAMPLES
        for operation in path_item.values():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                if "example" in parameter or "example" in schema or "examples" in parameter:
                    continue
                items = schema.get("items", {})
                if schema.get("enum") or items.get("enum"):
                    parameter["example"] = [items["enum"][0]] if items.get("enum") else schema["enum"][0]
                elif schema.get("type") == "boolean":
                    parameter["example"] = True
                elif (path, parameter["name"]) in PATH_EXAMPLES:
                    parameter["example"] = PATH_EXAMPLES[(path, parameter["name"])]
                elif parameter["name"] in by_name:
                    parameter["example"] = by_name[parameter["name"]]
            for status, response in operation.get("responses", {}).items():
                example = ERROR_EXAMPLES.get(status)
                media = response.get("content", {}).get("application/json")
                if example is not None and media is not None and "example" not in media:
                    media["example"] = example
    return result
