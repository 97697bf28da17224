from django.core.management.base import BaseCommand

from whitepaper.export import iter_csv_lines
from whitepaper.models import PublishedResult


class Command(BaseCommand):
    help = ("Print every vendor-published result as CSV on stdout (the columns and rows of the API's "
            "?format=csv; --include-internal as its include_internal=true).")

    def add_arguments(self, parser):
        parser.add_argument("--include-internal", action="store_true",
                            help="Also print this dashboard's own measurements (published benchmark runs).")

    def handle(self, *args, **options):
        results = PublishedResult.objects.visible(include_internal=options["include_internal"])
        for line in iter_csv_lines(results):
            self.stdout.write(line, ending="")
