"""The Django admin for the bank: a question's current YAML is edited in a textarea;
saving validates it and stores a new version (origin: browser). Only users with
`questions.author_questions` (the admin role) see any of it."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from questions import selectors, services
from questions.forms import QuestionAdminForm
from questions.models import Question, QuestionVersion


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    """Permissions follow the author permission, not Django's per-model ones, so the
    admin role needs exactly one permission for the whole bank."""

    form = QuestionAdminForm
    list_display = [
        "seed_number", "slug", "title", "topic", "difficulty", "is_released", "interview_only", "current_number"
    ]
    list_filter = ["topic", "difficulty", "is_released", "interview_only"]
    search_fields = ["slug", "title", "summary"]
    list_select_related = ["current_version"]
    readonly_fields = [
        "slug", "title", "topic", "difficulty", "seed_number", "current_version", "authoring_links", "version_history"
    ]
    fields = [
        "authoring_links", "slug", "title", "topic", "difficulty", "seed_number", "current_version",
        "is_released", "interview_only", "source_text", "version_history",
    ]

    @admin.display(description="version")
    def current_number(self, question):
        return question.current_version.number if question.current_version else None

    @admin.display(description="authoring")
    def authoring_links(self, question):
        if not question.pk or question.current_version is None:
            return "-"
        return format_html(
            '<a href="{}">preview</a> · <a href="{}">validate</a> · <a href="{}">export</a>',
            reverse("questions:preview", args=[question.slug]),
            reverse("questions:validate", args=[question.slug]),
            reverse("questions:export", args=[question.slug]),
        )

    @admin.display(description="versions")
    def version_history(self, question):
        if not question.pk:
            return "-"
        rows = format_html_join(
            "",
            "<tr><td>v{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            (
                (version.number, version.get_origin_display(), version.source_path or version.created_by or "",
                 version.created_at.strftime("%Y-%m-%d %H:%M"), version.content_hash[:12])
                for version in question.versions.select_related("created_by").order_by("-number")
            ),
        )
        return format_html("<table>{}</table>", rows)

    def has_module_permission(self, request):
        return selectors.can_author(request.user)

    def has_view_permission(self, request, obj=None):
        return selectors.can_author(request.user)

    def has_add_permission(self, request):
        return selectors.can_author(request.user)

    def has_change_permission(self, request, obj=None):
        return selectors.can_author(request.user)

    def has_delete_permission(self, request, obj=None):
        # Deleting a question would delete its history; unreleasing is the way to retire one.
        return False

    def save_model(self, request, obj, form, change):
        """Store the validated text through the service, which versions it; the model
        form itself carries only the release flag (the interview-only box is written
        into the text by the form, and the service sets the field from the text)."""
        result = services.question_save_text(
            form.cleaned_data["source_text"],
            origin=QuestionVersion.Origin.BROWSER,
            user=request.user,
            expected_slug=obj.slug if change else None,
            release_new=obj.is_released,
            report=form.validation_report,
        )
        if not result.ok:  # the form validated this text; nothing should get here
            raise ValueError("; ".join(str(problem) for problem in result.problems))
        Question.objects.filter(pk=result.question.pk).update(is_released=obj.is_released)
        obj.pk = result.question.pk
        obj.refresh_from_db()

