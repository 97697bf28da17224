from django.core.management.base import BaseCommand, CommandError

from whitepaper.importer import DataFileError, bundled_files, import_files, sync_vocabulary


class Command(BaseCommand):
    help = "Load the bundled whitepaper data files (or the files given). Idempotent; one transaction per document."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", help="YAML data files (default: every file in whitepaper/data/)")

    def handle(self, *args, files, **options):
        try:
            sync_vocabulary()
            for report in import_files(files or bundled_files()):
                self.stdout.write(str(report))
        except DataFileError as exc:
            raise CommandError(str(exc)) from exc
