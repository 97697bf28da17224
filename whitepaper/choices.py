"""The catalogue's fixed vocabularies (Django choices): the models store them, the rules (queries), the reader's
words (display) and the forms name them, without importing the models."""

from django.db import models
from django.utils.translation import gettext_lazy as _

# The one mark of a value a document does not state or a run did not measure, on every page (the template filter
# or_not_stated and tag not_stated) and in the words rules hand to pages (compare's and reproduce's rows). Data keeps
# its empties: null in the API and Parquet, an empty cell in CSV.
NOT_STATED_MARK = "–"


def or_not_stated(value):
    """The value, or the mark when it is missing (None or empty text; 0 and False are values)."""
    return NOT_STATED_MARK if value is None or value == "" else value


class Architecture(models.TextChoices):
    X86 = "x86", "x86"
    ARM = "arm", "ARM"


class Deployment(models.TextChoices):
    HA = "ha", _("HA (primary/standby)")
    SINGLE = "single", _("Single instance")
    __empty__ = _("Not stated")


class Origin(models.TextChoices):
    VENDOR = "vendor", _("Vendor-published")
    INTERNAL = "internal", _("Internal measurement")
