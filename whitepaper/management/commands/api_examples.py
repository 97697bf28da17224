from django.core.management.base import BaseCommand
from django.test import Client

from whitepaper.api.examples import EXAMPLES_FILE, record


class Command(BaseCommand):
    help = ("Record the example answers of the public API operations from the catalogue in the database "
            "(the bundled whitepapers) into whitepaper/api/response_examples.json, which the schema shows.")

    def handle(self, *args, **options):
        import json

        from django.test.utils import override_settings

        with override_settings(ALLOWED_HOSTS=["rds-perf.example"]):
            examples = record(Client())
        EXAMPLES_FILE.write_text(json.dumps(examples, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        self.stdout.write(f"{len(examples)} examples written to {EXAMPLES_FILE}")
