from django.apps import AppConfig
from django.db.models import fields
from django.utils.translation import gettext_lazy as _


class WhitepaperConfig(AppConfig):
    name = "whitepaper"
    verbose_name = "Whitepaper catalogue"

    def ready(self):
        from . import freshness  # noqa: F401  (connects the signals that keep the catalogue stamp fresh)
        from . import newest  # noqa: F401  (connects the signals that keep PublishedResult.is_newest true)
        from . import order_key  # noqa: F401  (connects the signals that keep PublishedResult.document_order_key true)

        # The empty choice of model selects (Django 6.1's default label has no Chinese translation
        # in Django's own catalogue yet): ours, translated in locale/.
        fields.BLANK_CHOICE_LABEL = _("- Select an option -")
