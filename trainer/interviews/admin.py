"""Interviews in the Django admin: for looking, not rewriting. The event log has no
change or delete path here either (the model refuses them anyway)."""

from django.contrib import admin

from trainer.interviews.models import Interview, InterviewEvent, InterviewTemplate, Scorecard


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Interview)
class InterviewAdmin(ReadOnlyAdmin):
    list_display = ["id", "title", "created_by", "candidate", "status", "started_at", "deadline"]
    list_filter = ["status"]
    list_select_related = ["created_by", "candidate"]
    search_fields = ["title"]


@admin.register(InterviewEvent)
class InterviewEventAdmin(ReadOnlyAdmin):
    list_display = ["interview", "sequence", "kind", "at", "actor", "part_id"]
    list_filter = ["kind"]
    list_select_related = ["interview", "actor"]


@admin.register(Scorecard)
class ScorecardAdmin(ReadOnlyAdmin):
    list_display = ["interview", "interviewer", "status", "recommendation", "submitted_at"]
    list_select_related = ["interview", "interviewer"]


@admin.register(InterviewTemplate)
class InterviewTemplateAdmin(admin.ModelAdmin):
    list_display = ["name", "created_by", "created_at"]
    filter_horizontal = ["questions"]
