"""Issue 50's holes that answer over HTTP: a cron Celery's parser refuses with its own exception (a negative number,
an empty part) is a 400 or a form error naming `cron` on the API, the schedule page and the admin, never a 500."""

import pytest
from rest_framework.test import APIClient

from runs.models import Schedule, Target

from .test_runs_hostile_inputs import schedule_form, schedule_setup  # noqa: F401 - a fixture and its form

pytestmark = pytest.mark.django_db

# Each of these made celery.schedules.crontab raise ParseException (not a ValueError): a 500 before.
PARSE_EXCEPTIONS = ["-1 3 * * *", "0 -3 * * *", "0 3 --1 * *", "*/-1 * * * *", ", * * * *"]


@pytest.mark.parametrize("cron", PARSE_EXCEPTIONS)
def test_a_cron_celery_cannot_parse_is_a_400_naming_cron_on_the_api(staff_user, schedule_setup, cron):
    api = APIClient()
    api.force_authenticate(staff_user)
    response = api.post("/api/v1/schedules/", {"name": "n", "target": schedule_setup["target"].pk,
                                               "profile": "pgbench-ro-quick", "cron": cron}, format="json")
    assert response.status_code == 400, response.content[:300]
    assert "Not a valid cron expression" in response.json()["errors"]["cron"][0]
    assert not Schedule.objects.exists()


@pytest.mark.parametrize("cron", PARSE_EXCEPTIONS[:2])
def test_a_cron_celery_cannot_parse_is_a_form_error_on_the_page_and_in_the_admin(staff, schedule_setup, cron):
    response = staff.post("/runs/schedules/new/", schedule_form(schedule_setup, cron=cron))
    assert response.status_code == 200
    assert "cron" in response.context["form"].errors
    response = staff.post("/admin/runs/schedule/add/", schedule_form(schedule_setup, cron=cron))
    assert response.status_code == 200
    assert "cron" in response.context["adminform"].form.errors
    assert not Schedule.objects.exists()


def test_the_message_names_the_field_and_the_value(staff_user, schedule_setup):
    api = APIClient()
    api.force_authenticate(staff_user)
    response = api.post("/api/v1/schedules/", {"name": "n", "target": schedule_setup["target"].pk,
                                               "profile": "pgbench-ro-quick", "cron": "0 -3 * * *"}, format="json")
    message = response.json()["errors"]["cron"][0]
    assert "hour '-3'" in message, message


# --- an answer whose body a middleware replaces declares the new body's length (issue 50.7) ----------------------
@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("path", ["/api/v1/boom/", "/boom/"])
def test_a_500_declares_the_length_of_the_body_it_sends(db, debug, path):
    """The API's 500 was rewritten into its JSON error after CommonMiddleware had set Content-Length for Django's HTML
    (668 bytes declared, 67 sent: clients read "IncompleteRead"); with DEBUG on, the friendly page the same."""
    from django.test import Client
    from django.test.utils import override_settings

    with override_settings(DEBUG=debug, ROOT_URLCONF="tests.boom_urls"):
        response = Client(raise_request_exception=False).get(path)
    assert response.status_code == 500
    assert int(response["Content-Length"]) == len(response.content)


def test_a_friendly_404_declares_the_length_of_the_body_it_sends(db):
    from django.test import Client
    from django.test.utils import override_settings

    with override_settings(DEBUG=True):
        response = Client().get("/no-such-page/")
    assert response.status_code == 404
    assert "Content-Length" not in response or int(response["Content-Length"]) == len(response.content)


# --- every spelling of one server is one database, and an unspecified address is no server's (issue 50.3) ---------
def this_hosts_interface_address():
    """An address of one of this host's interfaces (not loopback), or None: read from the kernel's table."""
    import ipaddress
    import subprocess

    out = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        address = ipaddress.ip_interface(line.split()[3]).ip
        if not address.is_loopback:
            return str(address)
    return None


UNSPECIFIED = ["0", "0.0.0.0", "::", "0x0", "00", "0.0"]
# Each reaches the machine's MariaDB listening on 127.0.0.1 (and, listening on every address, the rest too).
SPELLINGS_OF_127_0_0_1 = ["localhost", "LOCALHOST", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "::1", "127.0.0.2"]


def target_form(**fields):
    return {"name": "t1", "engine": "mysql", "host": "127.0.0.1", "port": "3306", "database": "sbtest", "user": "bench",
            "password": "ok", "queue": "benchmarks", "tls_mode": "disable", **fields}


@pytest.mark.parametrize("host", UNSPECIFIED)
def test_a_target_naming_an_unspecified_address_is_refused_on_the_page_and_in_the_admin(operator, staff, host):
    response = operator.post("/runs/targets/new/", target_form(host=host))
    assert response.status_code == 200
    assert "unspecified address" in response.context["form"].errors["host"][0]
    response = staff.post("/admin/runs/target/add/", target_form(host=host))
    assert response.status_code == 200
    assert "host" in response.context["adminform"].form.errors
    assert not Target.objects.exists()


def test_a_launch_on_a_target_stored_with_an_unspecified_address_is_refused(operator_api, profiles):
    target = Target.objects.create(name="zero", engine="mysql", host="0", port=3306, database="sbtest", user="bench")
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick"},
                                 format="json")
    assert response.status_code == 400
    assert "unspecified address" in response.json()["errors"]["target"][0]


@pytest.mark.parametrize("host", [*SPELLINGS_OF_127_0_0_1, "this host's interface"])
def test_a_run_on_another_spelling_of_the_same_server_waits_for_the_first(operator_api, profiles, host):
    """Two target entries, one server and database: the second run waits for the first (before, 127.1 or 0x7f000001
    and 127.0.0.1 were two databases and both runs ran at once, dropping each other's tables)."""
    if host == "this host's interface":
        host = this_hosts_interface_address()
        assert host, "this machine has no interface address besides loopback"
    first = Target.objects.create(name="plain", engine="mysql", host="127.0.0.1", port=3306, database="sbtest", user="bench")
    other = Target.objects.create(name="spelled", engine="mysql", host=host, port=3306, database="sbtest", user="bench")
    ids = []
    for target in (first, other):
        response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick"},
                                     format="json")
        assert response.status_code == 201, response.content
        ids.append(response.json()["id"])
    assert operator_api.get(f"/api/v1/runs/{ids[1]}/").json()["waiting_for"] == ids[0]


def test_another_database_of_the_same_server_does_not_wait(operator_api, profiles):
    first = Target.objects.create(name="a", engine="mysql", host="127.0.0.1", port=3306, database="sbtest", user="bench")
    other = Target.objects.create(name="b", engine="mysql", host="localhost", port=3306, database="sbother", user="bench")
    ids = [operator_api.post("/api/v1/runs/", {"target": t.pk, "profile": "sysbench-oltp-rw-mysql-quick"},
                             format="json").json()["id"] for t in (first, other)]
    assert operator_api.get(f"/api/v1/runs/{ids[1]}/").json()["waiting_for"] is None
