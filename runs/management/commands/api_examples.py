import json

from django.core.management.base import BaseCommand
from django.db import transaction
from django.test import Client
from django.test.utils import override_settings

from runs.api.examples import record_runs
from whitepaper.api.examples import EXAMPLE_HOST, EXAMPLES_FILE, record


class Command(BaseCommand):
    help = ("Record the example answers of the API operations into whitepaper/api/response_examples.json, which the "
            "schema shows: the public ones from the catalogue in the database (the bundled whitepapers), the runs "
            "API's from a staff user, a target and runs created in a transaction that is rolled back.")

    def handle(self, *args, **options):
        host = EXAMPLE_HOST.split("//")[1]
        with override_settings(ALLOWED_HOSTS=[host]):
            examples = record(Client())
            with transaction.atomic():  # nothing the runs' examples create outlives the recording
                examples.update(record_runs(Client(), host))
                transaction.set_rollback(True)
        EXAMPLES_FILE.write_text(json.dumps(examples, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        self.stdout.write(f"{len(examples)} examples written to {EXAMPLES_FILE}")
