# Staff pages for targets and runs (/runs/...).
from django.urls import path, re_path

from . import campaign_views, edition_views, views

app_name = "runs"
urlpatterns = [
    path("", views.run_list, name="run-list"),
    path("new/", views.run_new, name="run-new"),
    path("compare/", views.run_compare, name="run-compare"),
    path("compare/interleave/", views.run_compare_interleave, name="run-compare-interleave"),
    path("series/", views.run_series, name="series"),
    path("regressions/", views.run_regressions, name="regressions"),
    path("<int:pk>/", views.run_detail, name="run-detail"),
    path("<int:pk>/cancel/", views.run_cancel, name="run-cancel"),
    path("<int:pk>/record/", views.run_record, name="run-record"),
    path("<int:pk>/export.json", views.run_export, name="run-export"),
    path("<int:pk>/samples.csv", views.run_samples_csv, name="run-samples-csv"),
    path("<int:pk>/publish/", views.run_publish, name="run-publish"),
    path("<int:pk>/retract/", views.run_retract, name="run-retract"),
    path("<int:pk>/drop-leftovers/", views.run_drop_leftovers, name="run-drop-leftovers"),
    path("campaigns/", campaign_views.campaign_list, name="campaign-list"),
    path("campaigns/new/", campaign_views.campaign_new, name="campaign-new"),
    path("campaigns/<int:pk>/", campaign_views.campaign_detail, name="campaign-detail"),
    re_path(rf"^campaigns/(?P<pk>\d+)/(?P<action>{'|'.join(campaign_views.ACTIONS)})/$", campaign_views.campaign_action,
            name="campaign-action"),
    path("campaigns/<int:pk>/edition/", edition_views.campaign_edition, name="campaign-edition"),
    path("campaigns/<int:pk>/edition.yaml", edition_views.campaign_edition_file, name="campaign-edition-file"),
    path("schedules/", views.schedule_list, name="schedule-list"),
    path("schedules/new/", views.schedule_form, name="schedule-new"),
    path("schedules/<int:pk>/", views.schedule_form, name="schedule-edit"),
    path("schedules/<int:pk>/delete/", views.schedule_delete, name="schedule-delete"),
    path("profiles/", views.profile_list, name="profile-list"),
    path("profiles/new/", views.profile_form, name="profile-new"),
    path("profiles/<int:pk>/", views.profile_form, name="profile-edit"),
    path("profiles/<int:pk>/delete/", views.profile_delete, name="profile-delete"),
    path("targets/", views.target_list, name="target-list"),
    path("targets/new/", views.target_form, name="target-new"),
    path("targets/<int:pk>/", views.target_form, name="target-edit"),
    path("targets/<int:pk>/test/", views.target_test, name="target-test"),
    path("targets/<int:pk>/archive/", views.target_archive, name="target-archive"),
]
