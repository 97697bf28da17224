# Run endpoints (/api/v1/runs/...) are registered here.
urlpatterns = []
