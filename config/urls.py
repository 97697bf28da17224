from django.contrib import admin
from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.i18n import JavaScriptCatalog


def api_not_found(request, *args, **kwargs):
    from config.api import not_found  # lazily: DRF's settings import config.api

    return not_found(request)


urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico whatever the page links to.
    path("favicon.ico", lambda request: HttpResponsePermanentRedirect(static("favicon.svg"))),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("api/v1/", include(("config.api_urls", "v1"), namespace="v1")),
    re_path(r"^api/(?!v1(/|$))", api_not_found),  # /api/v2/...: a JSON 404, not an HTML page
    path("runs/", include("runs.urls")),
    path("", include("whitepaper.urls")),
]
