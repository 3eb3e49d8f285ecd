"""The candidate's dashboard (mastery per topic, history, what next) and exports."""

import csv
import json

from django.contrib.auth.decorators import login_required, permission_required
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from questions.models import Topic
from questions.selectors import practice_bank
from trainer import charts, selectors, services
from trainer.spreadsheet import spreadsheet_cell

EXPORT_FIELDS = [
    ("id", "id"), ("created_at", "created_at"), ("question_version__question__slug", "question"),
    ("question_version__number", "question_version"), ("part_id", "part"), ("variant_seed", "variant_seed"),
    ("answer", "answer"), ("status", "status"), ("correct", "correct"), ("score", "score"),
    ("hints_used", "hints_used"), ("time_taken", "time_taken_seconds"),
    # Where the answer was given: "practice", or "interview" with the interview's id.
    # Interview answers never count in practice progress; a reader of the export must
    # be able to tell them apart too.
    ("context", "context"), ("interview_link__question__interview_id", "interview"),
    ("after_solution", "after_solution"), ("purpose", "purpose"),
    # The stored verdict's one word (grading.verdict.Outcome): correct, partial, wrong,
    # unjudged; empty for answers graded before verdicts carried it.
    ("verdict__outcome", "outcome"),
]


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
def dashboard(request):
    now = timezone.now()
    questions = practice_bank().select_related(None)  # listings need no version content
    data = selectors.dashboard(user=request.user, questions=questions, topics=Topic.choices, now=now)
    data["shares_practice"] = selectors.shares_practice(request.user)
    data["bars"] = charts.mastery_bars(data["mastery"])
    data["chart_height"] = len(data["bars"]) * 26 + 8
    data["history_chart"] = charts.history_chart(
        data["history"], Topic.choices, start=timezone.localtime(data["history_start"]), end=timezone.localtime(now))
    return render(request, "trainer/dashboard.html", data)


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@require_POST
@vary_on_headers("HX-Request")
def practice_sharing(request):
    """Turn sharing the user's practice with interviewers on or off (`shared`: true/false)."""
    shared = request.POST.get("shared") == "true"
    services.practice_sharing_set(request.user, shared=shared)
    if request.htmx:
        return render(request, "trainer/dashboard.html#sharing", {"shares_practice": shared})
    return redirect("dashboard")


def _export_records(user):
    for row in selectors.export_rows(user):
        row["context"] = "practice" if row["interview_link__question__interview_id"] is None else "interview"
        record = {name: row[field] for field, name in EXPORT_FIELDS}
        taken = record["time_taken_seconds"]
        record["time_taken_seconds"] = None if taken is None else round(taken.total_seconds(), 1)
        yield record


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
def export_attempts(request, fmt):
    """Every attempt of the logged-in user, as CSV or JSON (a download)."""
    records = list(_export_records(request.user))
    if fmt == "json":
        response = HttpResponse(json.dumps(records, cls=DjangoJSONEncoder, indent=1), content_type="application/json")
    else:
        response = HttpResponse(content_type="text/csv")
        writer = csv.DictWriter(response, fieldnames=[name for _, name in EXPORT_FIELDS])
        writer.writeheader()
        writer.writerows({name: spreadsheet_cell(value) for name, value in record.items()} for record in records)
    response["Content-Disposition"] = f'attachment; filename="attempts.{fmt}"'
    return response
