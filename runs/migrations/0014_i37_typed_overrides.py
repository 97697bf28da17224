"""Run settings stored typed (issue 37.1): runs and schedules launched from the web form stored their
overrides as the form's text ({"threads": "4", "thread_sweep": "2, 4, 8"}); the API's schema promises
integers, a list of integers and booleans. Each stored value is converted by the one parser of run settings
(runs.params.parse_overrides); a value it refuses (none should: every launch was validated) is kept as it is."""

from django.db import migrations

from runs.params import BY_NAME, parse_value


def typed(overrides):
    if not isinstance(overrides, dict):
        return overrides
    result = {}
    for name, value in overrides.items():
        errors = {}
        parsed = parse_value(BY_NAME[name], value, errors) if name in BY_NAME else value
        result[name] = value if errors else parsed
    return result


def forwards(apps, schema_editor):
    for model_name in ("Run", "Schedule"):
        model = apps.get_model("runs", model_name)
        changed = []
        for row in model.objects.exclude(overrides={}).only("id", "overrides").iterator():
            new = typed(row.overrides)
            if new != row.overrides:
                row.overrides = new
                changed.append(row)
        model.objects.bulk_update(changed, ["overrides"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("runs", "0013_i23_leftover_tables")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
