"""Hostile input that answered 500 (issue 34.6) is a 400 or a form error naming the field: a private key pasted as
the client certificate together with its key, schedule overrides nested past Python's recursion limit. A cron with
digits other than ASCII is refused wherever a schedule is written (page, admin, API), by the rule the API uses."""

import pytest

from runs.models import Schedule, Target

from testbed.tls_servers import make_ca

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def pem(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pem")
    key, cert = make_ca(directory, "client")
    return {"key": key.read_text(), "cert": cert.read_text()}


def target_form(**fields):
    return {"name": "t1", "engine": "postgresql", "host": "127.0.0.1", "port": "5432", "database": "sbtest", "user": "bench",
            "password": "ok", "queue": "benchmarks", "tls_mode": "require", **fields}


@pytest.mark.parametrize("as_cert", ["key", "key+cert", "cert+key"])
def test_it_refuses_a_private_key_pasted_as_the_client_certificate_with_its_key(client, operator_user, pem, as_cert):
    client.force_login(operator_user)
    cert = {"key": pem["key"], "key+cert": pem["key"] + pem["cert"], "cert+key": pem["cert"] + pem["key"]}[as_cert]
    response = client.post("/runs/targets/new/", target_form(tls_cert=cert, tls_key=pem["key"]))
    assert response.status_code == 200
    assert "private key, not a certificate" in response.context["form"].errors["tls_cert"][0]
    assert not Target.objects.exists()


@pytest.fixture
def schedule_setup(profiles, staff_user):
    target = Target.objects.create(name="pg", engine="postgresql", host="127.0.0.1", port=5432, database="db", user="u")
    return {"target": target, "profile": profiles["pgbench-ro-quick"]}


def schedule_form(setup, **fields):
    return {"name": "nightly", "target": setup["target"].pk, "profile": setup["profile"].pk, "cron": "0 3 * * *",
            "repeats": "1", "enabled": "on", "overrides": "{}", **fields}


HOSTILE_SCHEDULES = [("overrides", "[" * 5000), ("overrides", "{\"a\": " * 3000), ("overrides", "[" * 40 + "]" * 40),
                     ("cron", "٠ ٣ * * *"), ("cron", "０ ３ * * *"), ("cron", "0 𝟑 * * *")]


@pytest.mark.parametrize("field,value", HOSTILE_SCHEDULES)
def test_it_refuses_hostile_schedules_on_the_page_and_in_the_admin(staff, schedule_setup, field, value):
    response = staff.post("/runs/schedules/new/", schedule_form(schedule_setup, **{field: value}))
    assert response.status_code == 200
    assert field in response.context["form"].errors, response.context["form"].errors
    response = staff.post("/admin/runs/schedule/add/", schedule_form(schedule_setup, **{field: value}))
    assert response.status_code == 200
    assert field in response.context["adminform"].form.errors
    assert not Schedule.objects.exists()


@pytest.mark.parametrize("cron", ["٠ ٣ * * *", "０ ３ * * *", "0 𝟑 * * *"])
def test_it_refuses_a_cron_with_other_digits_through_the_api(staff_user, schedule_setup, cron):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(staff_user)
    response = api.post("/api/v1/schedules/", {"name": "n", "target": schedule_setup["target"].pk, "profile": "pgbench-ro-quick",
                                               "cron": cron}, format="json")
    assert response.status_code == 400
    assert "digits 0-9" in response.json()["errors"]["cron"][0]
    assert not Schedule.objects.exists()


def test_the_same_cron_in_ascii_digits_is_accepted(staff, schedule_setup):
    response = staff.post("/runs/schedules/new/", schedule_form(schedule_setup, cron="0 3 * * *"))
    assert response.status_code == 302
    assert Schedule.objects.get().periodic_task.crontab.hour == "3"
