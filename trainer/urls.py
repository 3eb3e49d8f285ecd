from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from trainer.views import accounts, health, item_stats, practice, progress

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="question-list", permanent=False)),
    path("healthz", health.healthz, name="healthz"),
    path("ping", health.ping, name="ping"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("questions/", practice.question_list, name="question-list"),
    path("questions/<slug:slug>/", practice.question_detail, name="question-detail"),
    path("questions/<slug:slug>/variant/", practice.new_variant, name="new-variant"),
    path("questions/<slug:slug>/artifacts/<str:file_name>", practice.download_artifact, name="question-artifact"),
    path("questions/<slug:slug>/hint/", practice.take_hint, name="take-hint"),
    path("questions/<slug:slug>/give-up/", practice.give_up, name="give-up"),
    path("questions/<slug:slug>/parts/<slug:part_id>/interpret/", practice.interpret_answer, name="interpret-answer"),
    path("questions/<slug:slug>/parts/<slug:part_id>/answer/", practice.submit_answer, name="submit-answer"),
    path("questions/<slug:slug>/parts/<slug:part_id>/examples/", practice.run_examples, name="run-examples"),
    path("questions/<slug:slug>/parts/<slug:part_id>/draft/", practice.save_draft, name="save-draft"),
    path("attempts/<int:attempt_id>/", practice.attempt_status, name="attempt-status"),
    path("attempts/<int:attempt_id>/self-assess/", practice.self_assess, name="self-assess"),
    path("review/", practice.review, name="review"),
    path("me/", progress.dashboard, name="dashboard"),
    path("me/sharing/", progress.practice_sharing, name="practice-sharing"),
    re_path(r"^me/attempts\.(?P<fmt>csv|json)$", progress.export_attempts, name="export-attempts"),
    path("author/item-statistics/", item_stats.item_statistics, name="item-statistics"),
    path("author/", include("questions.urls")),
    path("interviews/", include("trainer.interviews.urls")),
    path("admin/", admin.site.urls),
]
