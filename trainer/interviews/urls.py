from django.urls import path, re_path

from trainer.interviews.views import panel, review, room

ROOM_PART = "<int:interview_id>/room/q<int:position>/parts/<slug:part_id>"

urlpatterns = [
    path("", panel.interview_list, name="interview-list"),
    path("new/", panel.interview_create, name="interview-create"),
    path("join/<str:token>/", room.interview_join, name="interview-join"),
    path("templates/", panel.template_list, name="interview-templates"),
    path("templates/<int:template_id>/", panel.template_edit, name="interview-template-edit"),
    path("templates/<int:template_id>/delete/", panel.template_delete, name="interview-template-delete"),
    # The panel
    path("<int:interview_id>/", panel.interview_monitor, name="interview-monitor"),
    path("<int:interview_id>/timeline/", panel.interview_timeline, name="interview-timeline"),
    path("<int:interview_id>/live-code/", panel.interview_live_code, name="interview-live-code"),
    path("<int:interview_id>/notes/", panel.note_add, name="interview-note"),
    path("<int:interview_id>/interviewers/", panel.interviewer_add, name="interview-add-interviewer"),
    path("<int:interview_id>/end/", panel.interview_end, name="interview-end"),
    path("<int:interview_id>/transcript/", review.interview_transcript, name="interview-transcript"),
    re_path(r"^(?P<interview_id>[0-9]+)/transcript\.(?P<fmt>md|json)$", review.interview_export,
            name="interview-export"),
    path("<int:interview_id>/scorecard/", review.scorecard, name="interview-scorecard"),
    # The candidate
    path("<int:interview_id>/room/", room.interview_room, name="interview-room"),
    path("<int:interview_id>/room/status/", room.room_status, name="interview-room-status"),
    path("<int:interview_id>/room/start/", room.interview_start, name="interview-start"),
    path("<int:interview_id>/room/q<int:position>/artifacts/<str:file_name>", room.artifact_download,
         name="interview-artifact"),
    path("<int:interview_id>/room/q<int:position>/hint/", room.hint_take, name="interview-hint"),
    path(f"{ROOM_PART}/interpret/", room.answer_interpret, name="interview-interpret"),
    path(f"{ROOM_PART}/answer/", room.answer_submit, name="interview-answer"),
    path(f"{ROOM_PART}/snapshot/", room.code_snapshot, name="interview-snapshot"),
    path(f"{ROOM_PART}/run/", room.code_run, name="interview-run"),
    path("<int:interview_id>/attempts/<int:attempt_id>/", room.attempt_status, name="interview-attempt-status"),
]
