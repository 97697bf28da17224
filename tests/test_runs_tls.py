"""Runs against TLS-only servers (issue 22): the suite's own MariaDB and PostgreSQL (on free ports), which refuse
plaintext (require_secure_transport=ON; hostssl only), with a CA and a server certificate naming `localhost`
made by openssl at test time (testbed/tls_servers.py). A real Celery worker runs real sysbench and pgbench.

Each tool run is a few seconds; the runs are made once and shared by the assertions on them."""

import json
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from runs.models import Run, RunState, Target

from testbed.runs_support import private_tmp, queue_worker, tool_processes, wait_final, wait_for
from testbed.tls_servers import DATABASE, PASSWORD, USER, running_servers

from .tiers import tier

pytestmark = pytest.mark.django_db(transaction=True)
QUEUE = "tls-test"  # its own worker (its own TMPDIR), never the session's


@pytest.fixture(scope="module")
@tier("tool")
def servers():
    with running_servers("perfdash-tls-servers-") as started:
        yield started


@pytest.fixture(scope="module")
def worker_tmp(tmp_path_factory):
    return private_tmp(tmp_path_factory, "worker-tmp")


@pytest.fixture(scope="module")
@tier("tool")
def tls_worker(django_db_setup, bench_users, servers, worker_tmp):
    with queue_worker("tls-test", "runs-tls", worker_tmp, RUNS_ERROR_GRACE_SECONDS="3") as proc:
        yield proc


def make_target(servers, engine, name, host="localhost", mode="verify-full", ca=None, client_cert=True):
    target = Target(name=name, engine=engine, host=host, port=servers.mariadb_port if engine == "mysql" else servers.pg_port,
                    database=DATABASE, user=USER, tls_mode=mode, tls_ca=servers.ca_pem if ca is None else ca,
                    tls_cert=servers.client_cert_pem if client_cert else "", queue=QUEUE)
    target.set_password(PASSWORD)
    if client_cert:
        target.set_tls_key(servers.client_key_pem)
    target.full_clean()
    target.save()
    return target


def launch(operator_api, target, profile, **overrides):
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": profile, "overrides": overrides}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def leftovers(worker_tmp, servers):
    """Run directories, and any file holding TLS material, left in the worker's TMPDIR (the pool's own empty
    pymp-* directories aside)."""
    key_body = servers.client_key_pem.strip().splitlines()[1]
    found = []
    for path in Path(worker_tmp).rglob("*"):
        if "perfdash" in path.name or path.name.endswith(".pem") or (path.is_file() and key_body in path.read_text(errors="replace")):
            found.append(str(path))
    return found


def assert_no_secret(servers, *texts):
    key_body = servers.client_key_pem.strip().splitlines()[1]
    for text in texts:
        assert PASSWORD not in text and "s3cr3t" not in text
        assert key_body not in text


# --- the target form: TLS material validated on save ----------------------------------------------------
def test_it_refuses_a_private_key_pasted_as_the_ca_certificate(servers, client, operator_user):
    client.force_login(operator_user)
    form = {"name": "tls-form", "engine": "postgresql", "host": "localhost", "port": servers.pg_port, "database": DATABASE,
            "user": USER, "password": PASSWORD, "tls_mode": "verify-full", "queue": QUEUE}
    response = client.post("/runs/targets/new/", {**form, "tls_ca": servers.client_key_pem})
    assert response.status_code == 200
    assert "This is a private key, not a certificate" in response.content.decode()
    response = client.post("/runs/targets/new/", {**form, "tls_ca": "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----"})
    assert "Not a PEM certificate" in response.content.decode()
    response = client.post("/runs/targets/new/", {**form, "tls_ca": ""})
    assert "checks the server&#x27;s certificate against a CA certificate" in response.content.decode()
    response = client.post("/runs/targets/new/", {**form, "tls_ca": servers.ca_pem, "tls_cert": servers.client_cert_pem})
    assert "A client certificate and its key go together" in response.content.decode()
    assert not Target.objects.filter(name="tls-form").exists()
    # A valid set is stored, the key encrypted and never shown again.
    response = client.post("/runs/targets/new/", {**form, "tls_ca": servers.ca_pem, "tls_cert": servers.client_cert_pem,
                                                  "tls_key": servers.client_key_pem})
    assert response.status_code == 302, response.content.decode()[:2000]
    target = Target.objects.get(name="tls-form")
    assert target.tls_key == servers.client_key_pem and servers.client_key_pem not in target.tls_key_encrypted
    assert_no_secret(servers, client.get(f"/runs/targets/{target.pk}/").content.decode(),
                     json.dumps(APIClient().get("/api/v1/targets/").json()))
    # 'Test connection' says the connection is encrypted and verified, as the server reports it.
    html = client.post(f"/runs/targets/{target.pk}/test/", HTTP_HX_REQUEST="true").content.decode()
    assert "✔" in html and "PostgreSQL 15" in html, html
    assert "and verified: certificate chain and host name" in html and "TLSv1." in html


def test_the_certificates_and_key_can_be_uploaded_as_the_vendors_files(servers, client, operator_user):
    """The vendor's downloads (ca.pem, client-cert.pem, client-key.pem) chosen as files: read as the pasted text
    is, validated the same way, each error beside the file's own field."""
    client.force_login(operator_user)
    form = {"name": "tls-upload", "engine": "postgresql", "host": "localhost", "port": servers.pg_port, "database": DATABASE,
            "user": USER, "password": PASSWORD, "tls_mode": "verify-full", "queue": QUEUE}

    def upload(name, text):
        return SimpleUploadedFile(name, text if isinstance(text, bytes) else text.encode(), content_type="application/x-pem-file")

    def field_errors(response, field):
        return [str(e) for e in response.context["form"].errors.get(field, [])]

    response = client.post("/runs/targets/new/", {**form, "tls_ca_file": upload("ca.pem", servers.client_key_pem)})
    assert any("This is a private key, not a certificate" in e for e in field_errors(response, "tls_ca_file"))
    der = subprocess.run(["openssl", "x509", "-outform", "der"], input=servers.ca_pem.encode(), capture_output=True, check=True).stdout
    response = client.post("/runs/targets/new/", {**form, "tls_ca_file": upload("ca.der", der)})
    assert any("not PEM text" in e and "openssl x509 -inform der" in e for e in field_errors(response, "tls_ca_file"))
    response = client.post("/runs/targets/new/", {**form, "tls_ca": servers.other_ca_pem, "tls_ca_file": upload("ca.pem", servers.ca_pem)})
    assert field_errors(response, "tls_ca_file") == ["Give it once: pasted above or as a file, not both."]
    response = client.post("/runs/targets/new/", {**form, "tls_ca_file": upload("ca.pem", servers.ca_pem),
                                                  "tls_cert_file": upload("client-cert.pem", servers.client_cert_pem),
                                                  "tls_key_file": upload("client-key.pem", "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")})
    assert any("Not a PEM private key" in e for e in field_errors(response, "tls_key_file"))
    assert not Target.objects.filter(name="tls-upload").exists()
    response = client.post("/runs/targets/new/", {**form, "tls_ca_file": upload("ca.pem", servers.ca_pem),
                                                  "tls_cert_file": upload("client-cert.pem", servers.client_cert_pem),
                                                  "tls_key_file": upload("client-key.pem", servers.client_key_pem)})
    assert response.status_code == 302, response.content.decode()[:2000]
    target = Target.objects.get(name="tls-upload")
    assert (target.tls_ca, target.tls_cert, target.tls_key) == (servers.ca_pem, servers.client_cert_pem, servers.client_key_pem)
    assert servers.client_key_pem not in target.tls_key_encrypted


# --- runs that succeed with TLS -----------------------------------------------------------------------------
@pytest.fixture
def tls_runs(servers, tls_worker, committed, operator_api):
    """sysbench/MySQL with verify-ca, sysbench/PostgreSQL and pgbench with verify-full, one after another."""
    mysql = make_target(servers, "mysql", "tls-mariadb", mode="verify-ca")
    pg = make_target(servers, "postgresql", "tls-postgresql", mode="verify-full")
    ids = {"sysbench-mysql": launch(operator_api, mysql, "sysbench-oltp-rw-mysql-quick", duration_s=2, threads=2),
           "sysbench-pgsql": launch(operator_api, pg, "sysbench-oltp-rw-postgresql-quick", duration_s=2, threads=2),
           "pgbench": launch(operator_api, pg, "pgbench-ro-quick", duration_s=2, threads=2)}
    return {name: wait_final(pk, timeout=180) for name, pk in ids.items()}


def test_runs_over_tls_succeed_and_the_server_saw_tls(tls_runs, servers, worker_tmp, client, operator_user, operator_api):
    client.force_login(operator_user)
    for name, run in tls_runs.items():
        assert run.state == RunState.SUCCEEDED, (name, run.reason, run.log[-3000:])
        view = run.tls["tool"]
        # The server's own view of the tool's sessions, not the dashboard's connection.
        assert view["source"] == ("performance_schema.status_by_thread" if name == "sysbench-mysql" else "pg_stat_ssl"), view
        assert view["sessions"] >= 2 and view["encrypted"] == view["sessions"], (name, view)
        assert view["versions"] and view["versions"][0].startswith("TLSv1") and view["ciphers"], view
        assert run.tls["mode"] == ("verify-ca" if name == "sysbench-mysql" else "verify-full")
        html = client.get(f"/runs/{run.pk}/").content.decode()
        assert 'id="run-tls"' in html and view["ciphers"][0] in html
        record = client.get(f"/runs/{run.pk}/export.json").json()
        assert record["network"]["tls"]["tool"] == view and record["target"]["tls_mode"] == run.tls["mode"]
        assert record["network"]["round_trip"]["median_ms"] == run.round_trip["median_ms"] > 0
        assert_no_secret(servers, run.log, run.command_line, html, json.dumps(record),
                         json.dumps(operator_api.get(f"/api/v1/runs/{run.pk}/").json()))
    assert "--mysql-ssl=on" in tls_runs["sysbench-mysql"].command_line
    # No certificate or key file (nor any run directory) remains.
    assert leftovers(worker_tmp, servers) == []


def test_an_operator_sees_the_tls_in_the_browser(tls_runs, servers, operator_user, live_server, browser):
    """As a new user would: the targets page's 'Test connection' says encrypted and verified, the run page shows
    the cipher the server saw; at 1280 and 390 px, in English and Chinese, nothing wider than the screen."""
    from django.test import Client

    client = Client()
    client.force_login(operator_user)
    run = tls_runs["pgbench"]
    cipher = run.tls["tool"]["ciphers"][0]
    for lang, verified in (("en", "and verified: certificate chain and host name"), ("zh-hans", "并已验证：证书链和主机名")):
        for width in (1280, 390):
            context = browser.new_context(viewport={"width": width, "height": 900})
            context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
            page = context.new_page()
            page.goto(f"{live_server.url}/runs/targets/?lang={lang}")
            row = page.locator("tr", has_text="tls-postgresql")
            row.locator("button").first.click()
            page.wait_for_function(f"() => document.getElementById('test-{run.target_id}').innerText.includes('✔')")
            assert verified in page.inner_text(f"#test-{run.target_id}")
            page.goto(f"{live_server.url}/runs/{run.pk}/?lang={lang}")
            assert cipher in page.inner_text("#run-tls")
            assert page.inner_text("#summary-round-trip") == str(run.round_trip["median_ms"])
            page.screenshot(path=f"{tempfile.gettempdir()}/run-tls-{lang}-{width}.png", full_page=True)
            assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
            tps = page.locator("#summary-tps").bounding_box()
            assert tps["x"] + tps["width"] <= width
            page.goto(f"{live_server.url}/runs/targets/{run.target_id}/?lang={lang}")
            assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
            page.screenshot(path=f"{tempfile.gettempdir()}/target-tls-{lang}-{width}.png", full_page=True)
            context.close()


# --- runs that fail, each naming the cause ------------------------------------------------------------------
def test_tls_failures_name_their_cause(servers, tls_worker, committed, operator_api, worker_tmp):
    wrong_ca = make_target(servers, "postgresql", "tls-wrong-ca", ca=servers.other_ca_pem)
    mismatch = make_target(servers, "postgresql", "tls-by-address", host="127.0.0.1")
    plaintext = make_target(servers, "mysql", "tls-disabled", mode="disable", ca="", client_cert=False)
    full_mysql = make_target(servers, "mysql", "tls-mysql-verify-full", mode="verify-full")
    ids = {"wrong ca": launch(operator_api, wrong_ca, "pgbench-ro-quick", duration_s=2),
           "mismatch": launch(operator_api, mismatch, "sysbench-oltp-rw-postgresql-quick", duration_s=2),
           "disable": launch(operator_api, plaintext, "sysbench-oltp-rw-mysql-quick", duration_s=2),
           "verify-full mysql": launch(operator_api, full_mysql, "sysbench-oltp-rw-mysql-quick", duration_s=2)}
    runs = {name: wait_final(pk, timeout=120) for name, pk in ids.items()}
    assert all(run.state == RunState.FAILED for run in runs.values()), {n: (r.state, r.reason) for n, r in runs.items()}
    assert "not signed by the target's CA certificate" in runs["wrong ca"].reason
    assert 'does not name the host "127.0.0.1"' in runs["mismatch"].reason
    assert "accepts TLS connections only, and this target's TLS mode is disable" in runs["disable"].reason
    assert "verify-full cannot be honoured by sysbench" in runs["verify-full mysql"].reason
    for run in runs.values():
        assert_no_secret(servers, run.reason, run.log)
    assert leftovers(worker_tmp, servers) == []


def test_a_tool_that_goes_on_after_its_first_error_is_stopped_and_the_run_fails(servers, tls_worker, committed, operator_api,
                                                                              worker_tmp):
    """pgbench goes on with its other clients when one connection is lost (and fails only at the end of -T): the
    run fails within 10 s of that first error, with it as the reason, instead of 60 s later."""
    import psycopg

    target = make_target(servers, "postgresql", "tls-lost-backend", mode="verify-full")
    pk = launch(operator_api, target, "pgbench-ro-quick", duration_s=60, threads=2)
    wait_for(lambda: Run.objects.get(pk=pk).samples.filter(step=1, warmup=False).exists(), timeout=120,
             message="the run step to report")
    with psycopg.connect(host=str(servers.pg_socket_dir), port=servers.pg_port, user="postgres", dbname="postgres", autocommit=True) as pg:
        killed = pg.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND application_name = "
                            "'pgbench' ORDER BY pid LIMIT 1", [DATABASE]).fetchall()
    assert killed == [(True,)]
    stopped_at = time.monotonic()
    run = wait_for(lambda: (r := Run.objects.get(pk=pk)).is_final and r, timeout=10, interval=0.1,
                   message="the run to fail within 10 s of the tool's first error")
    assert time.monotonic() - stopped_at <= 10
    assert run.state == RunState.FAILED, run.reason
    assert run.reason.startswith("run failed: pgbench: error: client") and "aborted" in run.reason, run.reason
    assert "(the tool was stopped 3 s after its first error)" in run.reason
    assert not tool_processes(f"{worker_tmp}/perfdash-run{pk}-")


# --- a target that goes away mid-run (last: it stops the module's MariaDB) -----------------------------------
def test_a_target_stopped_mid_run_fails_the_run_within_10_s(servers, tls_worker, committed, operator_api, worker_tmp):
    target = make_target(servers, "mysql", "tls-going-away", mode="verify-ca")
    pk = launch(operator_api, target, "sysbench-oltp-rw-mysql-quick", duration_s=60, threads=2)
    wait_for(lambda: Run.objects.get(pk=pk).samples.filter(step=1, warmup=False).exists(), timeout=120,
             message="the run step to report")
    tools = [pid for pid, argv in tool_processes(f"{worker_tmp}/perfdash-run{pk}-") if argv[0] == "sysbench"]
    assert tools
    stopped_at = time.monotonic()
    servers.stop_mariadb()
    run = wait_for(lambda: (r := Run.objects.get(pk=pk)).is_final and r, timeout=10, interval=0.1,
                   message="the run to fail within 10 s of the server's stop")
    elapsed = time.monotonic() - stopped_at
    assert run.state == RunState.FAILED, run.reason
    # The tool's own error, with the client library's error number (2013 lost connection over TCP; over TLS the
    # server's going away is 2026 "unexpected eof while reading").
    assert run.reason.startswith("run failed: FATAL: mysql") and ("error 2026" in run.reason or "error 2013" in run.reason), run.reason
    assert elapsed <= 10
    for pid in tools:  # no tool process left
        assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    assert not tool_processes(f"{worker_tmp}/perfdash-run{pk}-")
