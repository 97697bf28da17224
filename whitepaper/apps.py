from django.apps import AppConfig


class WhitepaperConfig(AppConfig):
    name = "whitepaper"
    verbose_name = "Whitepaper catalogue"

    def ready(self):
        from . import freshness  # noqa: F401  (connects the signals that keep the catalogue stamp fresh)
