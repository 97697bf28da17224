from django.db import migrations, models

from whitepaper.queries import version_order_key


def byte_order_on_postgresql(apps, schema_editor):
    """The key compares byte-wise on PostgreSQL whatever the database's collation (SQLite's default is)."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute('ALTER TABLE whitepaper_engineversion ALTER COLUMN order_key TYPE varchar(200) COLLATE "C"')


def fill_keys(apps, schema_editor):
    """Store the key (queries.version_order_key) for the existing versions."""
    EngineVersion = apps.get_model("whitepaper", "EngineVersion")
    for engine_version in EngineVersion.objects.all():
        EngineVersion.objects.filter(pk=engine_version.pk).update(order_key=version_order_key(engine_version.version))


class Migration(migrations.Migration):

    dependencies = [
        ('whitepaper', '0011_i21_documents_newest_first'),
    ]

    operations = [
        migrations.AddField(
            model_name='engineversion',
            name='order_key',
            field=models.CharField(default='', editable=False, max_length=200),
        ),
        migrations.RunPython(byte_order_on_postgresql, migrations.RunPython.noop),
        migrations.RunPython(fill_keys, migrations.RunPython.noop),
        migrations.AlterModelOptions(
            name='engineversion',
            options={'ordering': ['engine__name', 'order_key']},
        ),
    ]
