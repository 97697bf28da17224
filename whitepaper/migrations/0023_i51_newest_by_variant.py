from django.db import migrations

from whitepaper.queries import PublishedResultQuerySet


def mark_newest(apps, schema_editor):
    """Store the rule (queries.newest_rank) again: a variant (variants.VARIANT_FIELDS) now has its data size (hot
    rows) and storage, so a flavour an older edition printed at another data size stays that size's newest figure."""
    PublishedResult = apps.get_model("whitepaper", "PublishedResult")
    rows = PublishedResultQuerySet(model=PublishedResult)
    for version in sorted(set(rows.order_by().values_list("engine_version_id", flat=True))):
        rows.filter(engine_version_id=version).refresh_newest()


class Migration(migrations.Migration):

    dependencies = [
        ("whitepaper", "0022_i52_undelivered_webhook_deliveries"),
    ]

    operations = [
        migrations.RunPython(mark_newest, migrations.RunPython.noop),
    ]
