"""The catalogue under /api/v1/ (names are reversed through the v1 namespace)."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from .. import converters  # noqa: F401  (registers <stated:…>)
from . import spec, views

router = DefaultRouter()
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
    *[url for url in router.urls if url.name not in ("version-detail", "family-detail")],
]
