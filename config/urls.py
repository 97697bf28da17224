from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.http import HttpResponsePermanentRedirect
from django.views.i18n import JavaScriptCatalog

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico whatever the page links to.
    path("favicon.ico", lambda request: HttpResponsePermanentRedirect(static("favicon.svg"))),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("api/v1/", include(("config.api_urls", "v1"), namespace="v1")),
    path("runs/", include("runs.urls")),
    path("", include("whitepaper.urls")),
]
