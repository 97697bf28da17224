# Staff pages for targets and runs (/runs/...).
app_name = "runs"
urlpatterns = []
