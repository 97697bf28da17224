"""What a run will load and how long it will take, before it starts (issue 33.8): the rows its prepare step
writes, the disk they take on the target, and the time (the prepare at a measured load rate, plus its steps).
A run past either bound asks to be confirmed: the form and the API refuse it, naming the field `confirm`,
until it is. One rule for the form, the API and the page that shows the estimate.

The rates and sizes (each driver's BYTES_PER_ROW and LOAD_ROWS_PER_S) were measured on this machine by benchmarks/load_rate.py (its output is kept beside it):
one table of 1,000,000 rows by sysbench oltp_read_write prepare (one loading thread), and pgbench -i -s 10.
A row's bytes are what the tables took afterwards (InnoDB's .ibd file; PostgreSQL's pg_total_relation_size:
heap, indexes and TOAST). Another server loads faster or slower; the estimate says which rate it assumed."""

from django.utils.translation import gettext as _

from .drivers import DRIVERS
from .params import expected_seconds, step_count

# A run that loads at least this much, or takes at least this long, is confirmed before it starts: every
# whitepaper profile as published is (64 x 10,000,000 rows; pgbench scale 100 and more); a quick one is not.
CONFIRM_BYTES = 10**9
CONFIRM_SECONDS = 3600


def data_rows(params):
    """The rows the prepare step loads, as the run's tool counts them (each driver's data_rows: sysbench's tables x
    rows per table, pgbench's scale x 100,000 accounts)."""
    driver = DRIVERS.get(params.get("tool"))
    return driver.data_rows(params) if driver else 0


def estimate(params, repeats=1):
    """{"rows", "bytes", "bytes_per_row", "load_rows_per_s", "prepare_s", "steps_s", "steps", "repeats", "total_s"}
    for a run of these (resolved) parameters launched `repeats` times: each run loads its data again and
    measures its steps (warm-up and duration each)."""
    driver, engine = DRIVERS.get(params.get("tool")), params.get("engine")
    rows = data_rows(params)
    rate = driver.LOAD_ROWS_PER_S.get(engine) if driver else None
    bytes_per_row = driver.BYTES_PER_ROW.get(engine) if driver else None
    prepare = rows / rate if rate else 0.0
    steps = expected_seconds(params)
    return {"rows": rows, "bytes": rows * (bytes_per_row or 0), "bytes_per_row": bytes_per_row,
            "load_rows_per_s": rate, "prepare_s": round(prepare), "steps_s": steps, "steps": step_count(params),
            "repeats": repeats, "total_s": round((prepare + steps) * repeats)}


def needs_confirmation(found):
    return found["bytes"] >= CONFIRM_BYTES or found["total_s"] >= CONFIRM_SECONDS


def duration_text(seconds):
    """"45 s", "3 min 5 s", "4 h 43 min"."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return _("%(h)d h %(m)d min") % {"h": hours, "m": minutes}
    if minutes:
        return _("%(m)d min %(s)d s") % {"m": minutes, "s": secs}
    return _("%(s)d s") % {"s": secs}


def describe(found):
    """The estimate in words, as the form and the API's refusal say it."""
    text = _("This run loads %(rows)s rows, about %(gb)s GB on the target (%(bpr)s bytes a row), and takes about "
             "%(total)s: the prepare about %(prepare)s at %(rate)s rows/s, plus %(steps)s step(s) of warm-up and "
             "duration, %(steps_time)s.") % {
        "rows": f"{found['rows']:,}", "gb": f"{found['bytes'] / 1e9:,.1f}", "bpr": found["bytes_per_row"],
        "total": duration_text(found["total_s"]), "prepare": duration_text(found["prepare_s"]),
        "rate": f"{found['load_rows_per_s']:,}", "steps": found["steps"], "steps_time": duration_text(found["steps_s"])}
    if found["repeats"] > 1:
        text += " " + _("Each of the %(n)s repeats loads and measures again.") % {"n": found["repeats"]}
    return text


def confirmation_error(found):
    return _("%(estimate)s Confirm to launch it (the form's \"confirm\" box; the API's \"confirm\": true).") % {
        "estimate": describe(found)}
