from django.core.management.base import BaseCommand, CommandError

from whitepaper.importer import DataFileError, bundled_files, import_files, plan_files, sync_vocabulary


class Command(BaseCommand):
    help = "Load the bundled whitepaper data files (or the files given). Idempotent; one transaction per document."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", help="YAML data files (default: every file in whitepaper/data/)")
        parser.add_argument("--dry-run", action="store_true",
                            help="print what the import would change (documents, tables, rows created, changed "
                                 "with old and new values, deleted) and write nothing")

    def handle(self, *args, files, dry_run, **options):
        try:
            if dry_run:  # compares with the catalogue as it is; the vocabulary is not synced either
                for plan in plan_files(files or bundled_files()):
                    self.stdout.write(str(plan))
                return
            sync_vocabulary()
            for report in import_files(files or bundled_files()):
                self.stdout.write(str(report))
        except DataFileError as exc:
            raise CommandError(str(exc)) from exc
