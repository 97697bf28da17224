from django.apps import AppConfig


class WhitepaperConfig(AppConfig):
    name = "whitepaper"
    verbose_name = "Whitepaper catalogue"
