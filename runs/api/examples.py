"""Example answers of the runs API (issue 25.7), recorded by `python manage.py api_examples` beside the
catalogue's (whitepaper/api/examples.py) and attached to the schema by the same hook. The command calls
`record_runs` inside a transaction it rolls back: it creates a staff user with a token, a target, the bundled
profiles and two finished runs, then asks the real API for every runs operation as that user.

The finished runs hold what sysbench 1.0.20 really measured: their samples, summary and latency are the
drivers' own parsers (runs/drivers/sysbench.py) applied to its recorded output in tests/recorded/ (MySQL
oltp_read_write, 2 threads, 3 s: the quick profile's set-up). No server readings were recorded with that
output, so the server-samples example is an honest empty page."""

import io
import shlex
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone
from rest_framework.authtoken.models import Token

from .. import actions
from ..drivers import Connection, get_driver, redact
from ..execution import summarize
from ..insight import run_insight
from ..models import BenchmarkProfile, Campaign, Run, RunState, Sample, Target
from ..workdir import WORKDIR_PREFIX

RECORDED = Path(settings.BASE_DIR) / "tests" / "recorded"
RECORDINGS = ["sysbench-1.0.20-mysql-oltp_read_write-histogram.stdout.txt", "sysbench-1.0.20-mysql-oltp_read_write.stdout.txt"]
PROFILE = "sysbench-oltp-rw-mysql-quick"
# The target's password exists only inside the rolled-back transaction; tests/test_api_schema_examples.py
# asserts that it (and any key or token) appears in no example.
EXAMPLE_PASSWORD = "example-Pa55word!"


def measured_run(target, profile, user, recording):
    """A succeeded run whose numbers are sysbench's own (its recorded stdout through the driver's parsers)."""
    driver, stdout = get_driver(profile.tool), (RECORDED / recording).read_text(encoding="utf-8")
    params = profile.resolve({})
    run = Run.objects.create(target=target, profile=profile, params=params, requested_by=user, state=RunState.RUNNING,
                             started_at=timezone.now() - timedelta(seconds=params["duration_s"] + 1), step=1, step_count=1,
                             tool_version=driver.parse_version(stdout), log=stdout)
    conn = Connection(target.engine, target.host, target.port, target.database, target.user, target.tls_mode)
    steps = driver.plan(conn, {**params, "workload": profile.workload}, f"/tmp/{WORKDIR_PREFIX}{run.pk}-example")
    samples = [driver.parse_interval(line, "stdout") for line in stdout.splitlines()]
    Sample.objects.bulk_create([Sample(run=run, step=1, warmup=False, **s) for s in samples if s])
    report = driver.parse_summary(stdout)
    insight = run_insight([{"step": 1, "threads": params["threads"], "transactions": report.get("transactions"),
                            "latency": driver.parse_latency(stdout)}])
    run.beat(command_line=redact("\n".join(shlex.join(s.argv) for s in steps), [EXAMPLE_PASSWORD]), insight=insight,
             client_bound=insight["client_bound"])
    actions.start_cleanup(run)  # the worker's order: the report is read, the tables dropped, then it succeeds
    if not actions.succeed(run, summarize([{"step": 1, "threads": params["threads"], **report}], params)):
        raise RuntimeError(f"example run {run.pk} did not succeed")
    run.refresh_from_db()
    return run


def page(body):
    """A list answer with its page cut to the first item (an example, not the database)."""
    if isinstance(body, dict) and isinstance(body.get("results"), list) and "count" in body:
        return {**body, "results": body["results"][:1]}
    return body


def record_runs(client, host):
    """{"METHOD path status": {"content type": example}} of the runs API (call inside a transaction that is
    rolled back: it creates what it reads)."""
    call_command("seed_profiles", stdout=io.StringIO())
    user = get_user_model().objects.create_user("staff-example", is_staff=True)
    auth = {"HTTP_AUTHORIZATION": f"Token {Token.objects.create(user=user).key}", "HTTP_HOST": host, "secure": True}
    target = Target(name="mariadb-example", engine="mysql", host="mariadb.rds-perf.example", port=3306, database="sbtest",
                    user="sbtest", family="general", vcpus=2, memory_gb=4)
    target.set_password(EXAMPLE_PASSWORD)
    target.save()
    profile = BenchmarkProfile.objects.get(slug=PROFILE)
    runs = [measured_run(target, profile, user, recording) for recording in RECORDINGS]
    examples = {}

    def call(method, template, status, url=None, body=None):
        url = url or template
        response = getattr(client, method)(url, body, content_type="application/json", **auth) if body is not None \
            else getattr(client, method)(url, **auth)
        assert response.status_code == status, (method, url, response.status_code, response.content[:500])
        media = response["Content-Type"].split(";")[0]
        example = page(response.json()) if media == "application/json" else response.content.decode()
        examples[f"{method} {template} {status}"] = {media: example}
        return example

    run = runs[0].pk
    call("get", "/api/v1/profiles/", 200, "/api/v1/profiles/?page_size=1")
    call("get", "/api/v1/profiles/{slug}/", 200, f"/api/v1/profiles/{PROFILE}/")
    call("get", "/api/v1/targets/", 200, "/api/v1/targets/?page_size=1")
    call("get", "/api/v1/targets/{id}/", 200, f"/api/v1/targets/{target.pk}/")
    call("get", "/api/v1/runs/{id}/", 200, f"/api/v1/runs/{run}/")
    call("get", "/api/v1/runs/{id}/export/", 200, f"/api/v1/runs/{run}/export/")
    call("get", "/api/v1/runs/{id}/samples/", 200, f"/api/v1/runs/{run}/samples/")
    call("get", "/api/v1/runs/{id}/samples-csv/", 200, f"/api/v1/runs/{run}/samples-csv/")
    call("get", "/api/v1/runs/{id}/server-samples/", 200, f"/api/v1/runs/{run}/server-samples/")
    call("get", "/api/v1/runs/compare/", 200, f"/api/v1/runs/compare/?run={runs[0].pk}&run={runs[1].pk}")
    call("get", "/api/v1/runs/series/", 200, f"/api/v1/runs/series/?target={target.pk}&profile={PROFILE}")
    call("get", "/api/v1/runs/regressions/", 200, "/api/v1/runs/regressions/?page_size=1")
    call("get", "/api/v1/runs/", 200, "/api/v1/runs/?page_size=1")
    # A launch (queued: its task is sent only on commit, which never comes) and its cancellation.
    queued = call("post", "/api/v1/runs/", 201, body={"target": target.pk, "profile": PROFILE})
    call("post", "/api/v1/runs/{id}/cancel/", 202, f"/api/v1/runs/{queued['id']}/cancel/", body={})
    call("post", "/api/v1/runs/{id}/cancel/", 409, f"/api/v1/runs/{run}/cancel/", body={})  # it has finished
    campaign = call("post", "/api/v1/campaigns/", 201, body={"name": "quick matrix", "profile": PROFILE, "targets": [target.pk],
                                                             "repeats": 3})
    call("get", "/api/v1/campaigns/{id}/", 200, f"/api/v1/campaigns/{campaign['id']}/")
    call("get", "/api/v1/campaigns/", 200, "/api/v1/campaigns/?page_size=1")
    for verb, status in (("pause", 200), ("pause", 409), ("resume", 200), ("resume", 409)):
        call("post", f"/api/v1/campaigns/{{id}}/{verb}/", status, f"/api/v1/campaigns/{campaign['id']}/{verb}/", body={})
    call("post", "/api/v1/campaigns/{id}/draft/", 409, f"/api/v1/campaigns/{campaign['id']}/draft/", body={})  # none ran
    call("post", "/api/v1/campaigns/{id}/publish/", 409, f"/api/v1/campaigns/{campaign['id']}/publish/", body={})
    # A campaign whose one cell's rounds are the two measured runs: drafted and published.
    measured = call("post", "/api/v1/campaigns/", 201, body={"name": "quick edition", "profile": PROFILE,
                                                             "targets": [target.pk], "repeats": 2})
    group = Campaign.objects.get(pk=measured["id"]).cells.get().repeat_group
    Run.objects.filter(repeat_group=group).delete()
    for block, measured_one in enumerate(runs, start=1):
        Run.objects.filter(pk=measured_one.pk).update(repeat_group=group, repeat_index=block, block=block)
    call("post", "/api/v1/campaigns/{id}/draft/", 201, f"/api/v1/campaigns/{measured['id']}/draft/", body={})
    call("post", "/api/v1/campaigns/{id}/publish/", 200, f"/api/v1/campaigns/{measured['id']}/publish/", body={})
    call("post", "/api/v1/campaigns/{id}/cancel/", 202, f"/api/v1/campaigns/{campaign['id']}/cancel/", body={})
    call("post", "/api/v1/campaigns/{id}/cancel/", 409, f"/api/v1/campaigns/{campaign['id']}/cancel/", body={})
    schedule = {"name": "nightly quick run", "target": target.pk, "profile": PROFILE, "cron": "0 3 * * *"}
    created = call("post", "/api/v1/schedules/", 201, body=schedule)
    detail = f"/api/v1/schedules/{created['id']}/"
    call("put", "/api/v1/schedules/{id}/", 200, detail, {**schedule, "cron": "30 2 * * 1"})
    call("patch", "/api/v1/schedules/{id}/", 200, detail, {"repeats": 3})
    call("post", "/api/v1/schedules/{id}/pause/", 200, f"{detail}pause/", {})
    call("post", "/api/v1/schedules/{id}/resume/", 200, f"{detail}resume/", {})
    call("get", "/api/v1/schedules/{id}/", 200, detail)
    call("get", "/api/v1/schedules/", 200, "/api/v1/schedules/?page_size=1")
    # An operator's own profile (a copy of the quick one, longer), changed, then deleted; the quick one is in use.
    mine = {"slug": "sysbench-oltp-rw-mysql-10s", "name": "sysbench OLTP read-write, MySQL, 10 s", "tool": "sysbench",
            "engine": "mysql", "workload": "oltp_read_write", "quick": True, "tables": 1, "rows_per_table": 1000,
            "threads": 2, "duration_s": 10, "report_interval_s": 1}
    call("post", "/api/v1/profiles/", 201, body=mine)
    detail = f"/api/v1/profiles/{mine['slug']}/"
    call("put", "/api/v1/profiles/{slug}/", 200, detail, {**mine, "thread_sweep": [2, 4, 8]})
    call("patch", "/api/v1/profiles/{slug}/", 200, detail, {"warmup_s": 5})
    call("delete", "/api/v1/profiles/{slug}/", 409, f"/api/v1/profiles/{PROFILE}/")  # its runs need it
    assert client.delete(detail, **auth).status_code == 204  # no body: no example
    return examples
