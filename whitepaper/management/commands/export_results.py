from django.core.management.base import BaseCommand

from whitepaper.export import iter_csv_lines
from whitepaper.models import PublishedResult


class Command(BaseCommand):
    help = "Print every published result as CSV on stdout (the columns of the API's ?format=csv)."

    def handle(self, *args, **options):
        for line in iter_csv_lines(PublishedResult.objects.all()):
            self.stdout.write(line, ending="")
