"""Masking a password must not reveal it: only where the secret is really written (a keyed value, URL
credentials, a distinctive secret echoed whole) is it masked, never inside ordinary words (issue 23.1)."""

import pytest

from runs.drivers import judge_step, sysbench
from runs.drivers import Step
from runs.models import Target
from runs.runner import Outcome

MASK = "********"


def make_target(engine, host, port, password):
    t = Target(name=f"{engine}-{host}-{port}-{len(password)}", engine=engine, host=host, port=port, database="x", user="u")
    t.set_password(password)
    t.save()
    return t


@pytest.mark.parametrize("password", ["server", "x", "host", "connection"])
@pytest.mark.parametrize("engine,host,port", [("postgresql", "127.0.0.1", 1), ("postgresql", "nonexistent.invalid", 5432),
                                              ("mysql", "127.0.0.1", 1)])
def test_it_keeps_the_servers_message_whole_for_common_word_passwords(staff, engine, host, port, password):
    target = make_target(engine, host, port, password)
    response = staff.post(f"/runs/targets/{target.pk}/test/", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and "✘" in html
    # Nothing was masked, so nothing tells the password by the shape of the mask ...
    assert MASK not in html
    # ... and the driver's own words are whole: the host is named as it was given.
    assert host in html
    if engine == "postgresql" and port == 1:
        assert "Is the server running" in html


def test_it_masks_a_distinctive_password_where_a_tool_echoes_it_and_keyed_values_whatever_they_are():
    run = Step(phase="run", argv=["sysbench"], threads=8, index=1)
    secret = "Pw-s3cr3t,#x'z"
    reason, _ = judge_step(sysbench, run, Outcome(1, f"FATAL: bad password {secret}", ""), 60, [secret])
    assert reason == f"run failed: FATAL: bad password {MASK}"
    # A common word is left alone inside the tool's message (masking it would reveal it) ...
    reason, _ = judge_step(sysbench, run, Outcome(1, "FATAL: error 2002: Can't connect to server on 'db' (111)", ""), 60, ["server"])
    assert reason == "run failed: FATAL: error 2002: Can't connect to server on 'db' (111)"
    # ... and where a password is written as a value, the whole value goes, whatever it is.
    from runs.drivers import redact

    assert redact("--mysql-password=x --pgsql-password='a b' PGPASSWORD=server", ["x", "server"]) == (
        f"--mysql-password={MASK} --pgsql-password={MASK} PGPASSWORD={MASK}")
    assert redact("postgresql://u:server@db.example:5432/x", ["server"]) == f"postgresql://u:{MASK}@db.example:5432/x"
    assert redact("nonexistent.invalid: Is the server running?", ["x", "server", "s"]) == (
        "nonexistent.invalid: Is the server running?")
