# Run endpoints (/api/v1/runs/..., /api/v1/targets/, /api/v1/profiles/).
from rest_framework.routers import SimpleRouter

from .views import CampaignViewSet, ProfileViewSet, RunViewSet, ScheduleViewSet, TargetViewSet

router = SimpleRouter()
router.register("runs", RunViewSet, basename="run")
router.register("targets", TargetViewSet, basename="target")
router.register("profiles", ProfileViewSet, basename="profile")
router.register("schedules", ScheduleViewSet, basename="schedule")
router.register("campaigns", CampaignViewSet, basename="campaign")
urlpatterns = router.urls
