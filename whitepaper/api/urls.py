"""The catalogue under /api/v1/ (names are reversed through the v1 namespace)."""

from django.urls import path, reverse
from rest_framework import routers
from rest_framework.routers import DefaultRouter
from rest_framework.utils.urls import remove_query_param

from config.api import ContentCaching

from .. import converters  # noqa: F401  (registers <stated:…>)
from . import analysis, spec, views

class APIRootView(ContentCaching, routers.APIRootView):
    """The API root's links without the request's `?format=` (DRF's reverse copies it into each)."""

    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        response.data = {name: remove_query_param(url, "format") for name, url in response.data.items()}
        response.data["feed"] = request.build_absolute_uri(reverse("whitepaper:feed"))  # Atom, outside the API
        return response


class CatalogueRouter(DefaultRouter):
    """The API root (/api/v1/) lists every endpoint: the catalogue's lists, the runs API, the spec
    lookup, compare, sizing, the best result per flavour, the CSV's column dictionary, the schema and
    its docs page."""

    EXTRA = {"spec": "spec", "compare": "compare", "sizing": "sizing", "results-best": "results-best",
             "results-columns": "results-columns", "runs": "run-list", "targets": "target-list",
             "profiles": "profile-list", "schedules": "schedule-list", "schema": "schema", "docs": "docs",
             "changelog": "changelog"}

    def get_api_root_view(self, api_urls=None):
        api_root_dict = {prefix: self.routes[0].name.format(basename=basename) for prefix, _v, basename in self.registry}
        return APIRootView.as_view(api_root_dict={**api_root_dict, **self.EXTRA})


router = CatalogueRouter()
router.include_format_suffixes = False  # ?format=csv / ?format=json instead of results.csv
router.register("vendors", views.VendorViewSet, basename="vendor")
router.register("documents", views.DocumentViewSet, basename="document")
router.register("methodologies", views.MethodologyViewSet, basename="methodology")
router.register("engines", views.EngineViewSet, basename="engine")
router.register("versions", views.EngineVersionViewSet, basename="version")
router.register("families", views.FamilyViewSet, basename="family")
router.register("flavors", views.FlavorViewSet, basename="flavor")
router.register("results", views.ResultViewSet, basename="result")

retrieve = {"get": "retrieve"}
urlpatterns = [
    # Objects whose identity needs two keys: /versions/mysql/5.7/, /families/huawei/dedicated/.
    path("versions/<key:engine>/<stated:version>/", views.EngineVersionViewSet.as_view(retrieve), name="version-detail"),
    path("families/<key:vendor>/<key:slug>/", views.FamilyViewSet.as_view(retrieve), name="family-detail"),
    path("spec/", spec.SpecLookupView.as_view(), name="spec"),
    path("results/columns/", views.ColumnsView.as_view(), name="results-columns"),
    path("results/best/", analysis.BestResultsView.as_view(), name="results-best"),
    path("compare/", analysis.CompareView.as_view(), name="compare"),
    path("sizing/", analysis.SizingView.as_view(), name="sizing"),
    *[url for url in router.urls if url.name not in ("version-detail", "family-detail")],
]
