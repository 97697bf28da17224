"""PublishedResult.updated_at (issue 37.8: `updated_since=` on /api/v1/results/). Rows stored before get their
document's changed_at, the latest moment anything in the document is known to have changed, rather than the
moment of this migration (which would list every row as changed now)."""

import django.utils.timezone
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def from_documents(apps, schema_editor):
    PublishedResult = apps.get_model("whitepaper", "PublishedResult")
    Document = apps.get_model("whitepaper", "Document")
    changed = Document.objects.filter(tables__results=OuterRef("pk")).values("changed_at")[:1]
    PublishedResult.objects.update(updated_at=Subquery(changed))


class Migration(migrations.Migration):

    dependencies = [
        ("whitepaper", "0013_i33_result_measurement"),
    ]

    operations = [
        migrations.AddField(
            model_name="publishedresult",
            name="updated_at",
            field=models.DateTimeField(db_index=True, default=django.utils.timezone.now, editable=False),
        ),
        migrations.RunPython(from_documents, migrations.RunPython.noop),
    ]
