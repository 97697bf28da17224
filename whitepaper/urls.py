from django.urls import path

from . import views

app_name = "whitepaper"

urlpatterns = [
    path("", views.home, name="home"),
    path("documents/<slug:slug>/", views.document_detail, name="document"),
    path("engines/<slug:engine>/<str:version>/", views.engine_version, name="engine-version"),
]
