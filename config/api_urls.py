"""Everything under /api/v1/: the catalogue, the runs, the OpenAPI schema and its docs page."""

from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config.api import not_found

urlpatterns = [
    path("", include("whitepaper.api.urls")),
    path("", include("runs.api.urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="v1:schema"), name="docs"),
    # Last: any other /api/v1/.../ is a JSON 404 (paths without the slash still redirect), for every method
    # (csrf_exempt: a POST to an unknown API path is a 404, not Django's HTML CSRF page).
    re_path(r"^[\s\S]*/$", csrf_exempt(not_found)),
]
