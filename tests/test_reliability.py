"""Reliability without killing anything (tests/test_faults.py kills servers): request-body limits, the
runs API's 401, a cache whose Redis does not answer, secrets through pipes, stale work directories."""

import fcntl
import json
import logging
import os
import subprocess
import sys

import pytest
from django.test import override_settings
from rest_framework.authtoken.models import Token

from runs.runner import run_command
from runs.workdir import LOCK_NAME, remove_stale_workdirs

from testbed.runs_support import make_user
from testbed.runs_support import seed_profiles_for_tests

NOBODY_LISTENS = "redis://127.0.0.1:6399/0"  # in this checkout's port range; nothing is started there


@pytest.fixture
def staff_token(db):
    return Token.objects.create(user=make_user("limits-staff", staff=True)).key


def test_deeply_nested_json_is_a_400_naming_the_limit(client, staff_token, settings):
    body = "[" * 2000 + "]" * 2000
    response = client.post("/api/v1/runs/", body, content_type="application/json", HTTP_AUTHORIZATION=f"Token {staff_token}")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    # The API's one error shape (issue 13): {detail, code, errors}.
    assert response.json() == {"detail": f"JSON nested deeper than {settings.API_MAX_JSON_DEPTH} levels (API_MAX_JSON_DEPTH).",
                               "code": "parse_error", "errors": {}}
    # 33 levels is one too many, 32 is parsed (and then refused as a run, naming the fields).
    too_deep = json.dumps({"overrides": json.loads("[" * 31 + "]" * 31)})
    assert client.post("/api/v1/runs/", too_deep, content_type="application/json",
                       HTTP_AUTHORIZATION=f"Token {staff_token}").status_code == 400
    deep_enough = json.dumps({"target": 1, "overrides": json.loads("[" * 30 + "]" * 30)})
    response = client.post("/api/v1/runs/", deep_enough, content_type="application/json", HTTP_AUTHORIZATION=f"Token {staff_token}")
    assert response.status_code == 400 and "target" in response.json()["errors"]
    assert response.json()["code"] == "invalid"  # parsed: refused as a run, not as a body


def test_a_10_mb_body_is_a_json_413_naming_the_limit(client, staff_token):
    body = json.dumps({"target": 1, "profile": "x", "overrides": {"pad": "a" * 10_000_000}})
    response = client.post("/api/v1/runs/", body, content_type="application/json", HTTP_AUTHORIZATION=f"Token {staff_token}")
    assert response.status_code == 413 and response["Content-Type"] == "application/json"
    assert response.json()["detail"] == (f"The request body is {len(body)} bytes; the limit is 1048576 bytes "
                                         "(API_MAX_BODY_BYTES).")


def test_anonymous_runs_api_is_a_401_with_a_token_challenge(db, client):
    for url in ("/api/v1/runs/", "/api/v1/runs/1/", "/api/v1/targets/", "/api/v1/profiles/"):
        response = client.get(url)
        assert response.status_code == 401 and response["WWW-Authenticate"] == 'Bearer realm="api", Token realm="api"', url
    assert client.post("/api/v1/runs/", {}, content_type="application/json").status_code == 401


def test_a_post_to_an_unknown_api_path_is_a_json_404(db, client):
    response = client.post("/api/v1/no-such-thing/\nx/")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"


def test_pages_render_when_the_cache_server_does_not_answer(db, client, caplog):
    caches = {"default": {"BACKEND": "config.cache.ResilientRedisCache", "LOCATION": NOBODY_LISTENS}}
    with override_settings(CACHES=caches), caplog.at_level(logging.WARNING, logger="config.cache"):
        for _ in range(3):
            for url in ("/", "/explore/", "/api/v1/results/?page_size=5", "/documents/huawei-2023-08-03-rds/"):
                response = client.get(url)
                assert response.status_code == 200, url
    warnings = [r for r in caplog.records if r.name == "config.cache"]
    assert len(warnings) == 1 and "cache unavailable" in warnings[0].getMessage()
    assert not any(r.exc_info for r in caplog.records)


def test_a_secret_file_reaches_the_tool_through_a_pipe_and_never_the_disk(tmp_path):
    path = str(tmp_path / "tool.cfg")
    seen = []
    outcome = run_command(["cat", path], time_limit_s=10,
                          secret_files={path: "password=Pw-s3cr3t\n"}, on_line=lambda stream, line: seen.append(line))
    assert outcome.returncode == 0 and seen == ["password=Pw-s3cr3t"]
    assert list(tmp_path.iterdir()) == []  # nothing was written
    # The tool got /dev/fd/N in its argv: the path the driver named is not opened at all.
    probe = run_command([sys.executable, "-c", "import sys; print(sys.argv[1])", f"--config-file={path}"], time_limit_s=10,
                        secret_files={path: "x"})
    assert probe.stdout.startswith("--config-file=/dev/fd/")


def test_stale_work_directories_are_removed_and_live_ones_kept(tmp_path):
    dead = tmp_path / "perfdash-run7-abc"
    live = tmp_path / "perfdash-run8-def"
    other = tmp_path / "perfdash-fault-drill-x"  # not a run's work directory
    for directory in (dead, live, other):
        directory.mkdir()
        (directory / LOCK_NAME).touch()
    (dead / "leftover").write_text("x")
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               f"fd = os.open({str(live / LOCK_NAME)!r}, os.O_RDONLY)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert remove_stale_workdirs(tmp_path) == [str(dead)]
        assert not dead.exists() and live.exists() and other.exists()
    finally:
        holder.kill()
        holder.wait()
    fd = os.open(live / LOCK_NAME, os.O_RDONLY)  # the holder is gone: its lock went with it
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)
    assert remove_stale_workdirs(tmp_path) == [str(live)]


def test_nan_in_a_json_body_is_refused_as_drf_does(client, staff_token):
    response = client.post("/api/v1/runs/", '{"target": NaN, "profile": "x"}', content_type="application/json",
                           HTTP_AUTHORIZATION=f"Token {staff_token}")
    assert response.status_code == 400 and "NaN" in response.json()["detail"]


def test_runs_api_lists_are_paginated_and_their_filters_strict(db):
    from rest_framework.test import APIClient

    from runs.models import BenchmarkProfile, Run, Target

    seed_profiles_for_tests()
    me, other = make_user("list-me", staff=True), make_user("list-other", staff=True)
    target = Target.objects.create(name="t", engine="mysql", host="db.example", port=3306, database="d", user="u")
    profile = BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick")
    for owner in (me, other, other):
        Run.objects.create(target=target, profile=profile, params=profile.resolve({}), requested_by=owner)
    api = APIClient()
    api.force_authenticate(me)
    page = api.get("/api/v1/runs/?page_size=2").json()
    assert (page["count"], len(page["results"]), page["previous"]) == (3, 2, None) and "page=2" in page["next"]
    assert page["results"][0]["reproduces"] is None and page["results"][0]["published_result"] is None
    assert api.get("/api/v1/runs/?mine=true").json()["count"] == 1
    assert api.get("/api/v1/runs/?mine=false").json()["count"] == 3
    assert api.get(f"/api/v1/runs/?target={target.pk}").json()["count"] == 3
    assert api.get(f"/api/v1/runs/?target={target.pk + 1000}").json()["count"] == 0
    for query, field in (("mine=yes", "mine"), ("target=x", "target"), ("state=", "state"), ("page_size=501", "page_size")):
        response = api.get(f"/api/v1/runs/?{query}")
        assert response.status_code == 400 and list(response.json()["errors"]) == [field], query
    assert api.get("/api/v1/targets/").json()["count"] == 1
    assert api.get("/api/v1/profiles/?quick=true").json()["count"] == 5
    samples = api.get(f"/api/v1/runs/{Run.objects.first().pk}/samples/").json()
    assert set(samples) == {"run", "state", "count", "next_after", "results"}


def test_beat_logs_one_line_while_the_broker_is_down_not_a_traceback_per_tick(caplog):
    from celery.beat import SchedulingError
    from kombu.exceptions import OperationalError

    beat = logging.getLogger("celery.beat")  # the filter comes from settings.LOGGING
    with caplog.at_level(logging.INFO, logger="celery.beat"):
        for _ in range(5):  # five ticks of beat during one outage
            try:
                try:
                    raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
                except OperationalError as exc:
                    raise SchedulingError("Couldn't apply scheduled task reconcile-runs") from exc
            except SchedulingError as exc:
                beat.error("Message Error: %s", exc, exc_info=True)
        try:
            raise ValueError("not a connection problem")
        except ValueError:
            beat.error("something else", exc_info=True)
    records = [r for r in caplog.records if r.name == "celery.beat"]
    assert [(r.levelname, bool(r.exc_info)) for r in records] == [("WARNING", False), ("ERROR", True)]
    assert records[0].getMessage().startswith("broker unreachable (OperationalError: Error 111 connecting")
