"""Rows published before issue 46 carried one run's within-run interval (batch means) as their `tps_ci`, which
pages, the CSV and the API showed as the figure's 95 % interval: it spoke of one run, not the set-up. Now the
interval of a published figure is over the runs of its series: a single run's becomes its `stability` (n = 1, no
interval); a repeat group's row takes its group's interval over the runs."""

from django.db import migrations


def forwards(apps, schema_editor):
    PublishedResult = apps.get_model("whitepaper", "PublishedResult")
    for row in PublishedResult.objects.exclude(measurement={}).iterator():
        m = dict(row.measurement or {})
        if not m.get("run") or "stability" in m:
            continue
        repeats = m.get("repeats") or {}
        m["stability"] = m.get("tps_ci")
        m["n"] = repeats.get("n") or 1
        m["tps_ci"] = ({"low": repeats["ci_low"], "high": repeats["ci_high"], "n": repeats.get("n"),
                        "method": repeats.get("method")} if repeats.get("ci_low") is not None else None)
        row.measurement = m
        row.save(update_fields=["measurement"])


def backwards(apps, schema_editor):
    PublishedResult = apps.get_model("whitepaper", "PublishedResult")
    for row in PublishedResult.objects.exclude(measurement={}).iterator():
        m = dict(row.measurement or {})
        if "stability" not in m:
            continue
        m["tps_ci"] = m.pop("stability")
        m.pop("n", None)
        row.measurement = m
        row.save(update_fields=["measurement"])


class Migration(migrations.Migration):
    dependencies = [("runs", "0018_i46_series"), ("whitepaper", "0022_i52_undelivered_webhook_deliveries")]
    operations = [migrations.RunPython(forwards, backwards)]
