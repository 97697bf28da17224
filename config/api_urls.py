"""Everything under /api/v1/: the catalogue, the runs, the OpenAPI schema and its docs page."""

from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config.api import ContentCaching, not_found
from config.changelog import ChangelogView



def not_found_outside_v1(request, *args, **kwargs):
    """/api/v2/... and anything under /api/ outside v1: a JSON 404, not an HTML page."""
    return not_found(request)

class SchemaView(ContentCaching, SpectacularAPIView):
    """The OpenAPI schema with an ETag (it changes only with the code and the host), 304 on revalidation."""


urlpatterns = [
    path("", include("whitepaper.api.urls")),
    path("", include("runs.api.urls")),
    path("schema/", SchemaView.as_view(), name="schema"),
    path("changelog/", ChangelogView.as_view(), name="changelog"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="v1:schema"), name="docs"),
    # Last: any other /api/v1/.../ is a JSON 404 (paths without the slash still redirect), for every method
    # (csrf_exempt: a POST to an unknown API path is a 404, not Django's HTML CSRF page).
    re_path(r"^[\s\S]*/$", csrf_exempt(not_found)),
]
