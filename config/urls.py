from django.contrib import admin
from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.i18n import JavaScriptCatalog

# api_urls first: it loads DRF's views before config.api, whose classes DRF's settings name (config.api alone first
# would be imported half-way by DRF's settings).
from config.api_urls import not_found_outside_v1

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico whatever the page links to.
    path("favicon.ico", lambda request: HttpResponsePermanentRedirect(static("favicon.svg"))),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("api/v1/", include(("config.api_urls", "v1"), namespace="v1")),
    re_path(r"^api/(?!v1(/|$))", not_found_outside_v1),  # /api/v2/...: a JSON 404, not an HTML page
    path("runs/", include("runs.urls")),
    path("", include("whitepaper.urls")),
]
