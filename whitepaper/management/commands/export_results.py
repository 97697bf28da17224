from django.core.management.base import BaseCommand

from whitepaper.export import iter_csv_lines
from whitepaper.models import PublishedResult


class Command(BaseCommand):
    help = ("Print every vendor-published result as CSV on stdout (the columns, rows and cells of the API's "
            "?format=csv; --include-internal as its include_internal=true, --printed-cells as its printed_cells=true).")

    def add_arguments(self, parser):
        parser.add_argument("--include-internal", action="store_true",
                            help="Also print this dashboard's own measurements (published benchmark runs).")
        parser.add_argument("--printed-cells", action="store_true",
                            help="Deprecated (goes with the API's printed_cells=true, see docs/API-CHANGELOG.md 3.0.0): "
                                 "numbers as the document printed them (494, 8839.4) and version without the "
                                 "engine's name (10), as before 3.0.0.")

    def handle(self, *args, **options):
        results = PublishedResult.objects.visible(include_internal=options["include_internal"])
        if options["printed_cells"]:
            self.stderr.write("--printed-cells is deprecated: see docs/API-CHANGELOG.md (3.0.0) for its Sunset date.")
        for line in iter_csv_lines(results, printed=options["printed_cells"]):
            self.stdout.write(line, ending="")
