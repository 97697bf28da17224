"""The catalogue's fixed vocabularies (Django choices): the models store them, the rules (queries), the reader's
words (display) and the forms name them, without importing the models."""

from django.db import models
from django.utils.translation import gettext_lazy as _


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
