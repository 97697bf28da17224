"""The site's URLs plus one view that fails, for the 500 page tests."""

from django.urls import path

from config.urls import urlpatterns as site


def boom(request):
    raise RuntimeError("a failure for the 500 page test")


urlpatterns = [path("boom/", boom), path("api/v1/boom/", boom), *site]
