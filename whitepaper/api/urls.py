from rest_framework.routers import DefaultRouter

router = DefaultRouter()
# Catalogue endpoints are registered here (vendors, documents, results, ...).

urlpatterns = router.urls
