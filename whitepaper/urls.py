from django.urls import path

from . import converters  # noqa: F401  (registers <stated:…>)
from . import explorer, views
from .feeds import CatalogueFeed
from .drafting import views as drafting_views

app_name = "whitepaper"

urlpatterns = [
    path("", views.home, name="home"),
    path("documents/<slug:slug>/", views.document_detail, name="document"),
    path("engines/<slug:engine>/", views.engine_index, name="engine"),
    path("engines/<slug:engine>/<stated:version>/", views.engine_version, name="engine-version"),
    path("editions/<slug:older>/<slug:newer>/", views.edition_diff, name="edition-diff"),
    path("flavors/<int:pk>/", views.flavor_detail, name="flavor"),
    # readable addresses of the same page (Flavor.readable_url); the id's keeps working
    path("flavors/<slug:vendor>/<stated:family>/<int:vcpus>vcpu-<int:memory_gb>gb/", views.flavor_detail,
         name="flavor-by-size"),
    path("flavors/<slug:vendor>/<key:spec_code>/", views.flavor_detail, name="flavor-by-code"),
    path("explore/", explorer.explore, name="explore"),
    path("explore/results.csv", explorer.explore_csv, name="explore-csv"),
    path("compare/", views.compare, name="compare"),
    path("sizing/", views.sizing, name="sizing"),
    path("feed/", CatalogueFeed(), name="feed"),
    path("drafts/", drafting_views.draft_review, name="draft-review"),
]
