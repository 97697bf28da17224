"""The database cache table of the API's rate-limit counts (config/throttling.py) where no REDIS_URL is set: created
by `migrate` itself, so every way of starting the dashboard (scripts/dashboard.sh, runserver, a new checkout) has it.
`createcachetable` creates the tables of the configured database caches only, and leaves existing ones alone."""

from django.core.management import call_command
from django.db import migrations


def create_cache_tables(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("whitepaper", "0014_i37_result_updated_at")]
    operations = [migrations.RunPython(create_cache_tables, migrations.RunPython.noop)]
