"""Review: the transcript with playback, the exports, and each panel member's scorecard."""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpResponse
from django.shortcuts import redirect, render

from trainer.interviews import selectors, services, transcript
from trainer.interviews.forms import ScorecardForm
from trainer.interviews.models import RATING_DIMENSIONS
from trainer.interviews.views.panel import panel_interview_or_404


@login_required
def interview_transcript(request, interview_id):
    interview = panel_interview_or_404(request, interview_id)
    return render(request, "interviews/transcript.html", transcript.transcript(interview, request.user))


@login_required
def interview_export(request, interview_id, fmt):
    """The transcript and the submitted scorecards, as Markdown or JSON (a download)."""
    interview = panel_interview_or_404(request, interview_id)
    if fmt == "json":
        body = json.dumps(transcript.export_json(interview), cls=DjangoJSONEncoder, indent=1)
        response = HttpResponse(body, content_type="application/json")
    else:
        response = HttpResponse(transcript.export_markdown(interview), content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="interview-{interview.id}.{fmt}"'
    return response


def _initial(scorecard) -> dict:
    initial = {field: value for field, _, value in scorecard.ratings()}
    initial.update({
        "recommendation": scorecard.recommendation, "notes": scorecard.notes,
        "tick": [selectors.rubric_tick_value(tick.question_id, tick.part_id, tick.item_id)
                 for tick in scorecard.ticks.all()],
    })
    return initial


@login_required
def scorecard(request, interview_id):
    """The user's own scorecard: a draft they can save until they submit it."""
    interview = panel_interview_or_404(request, interview_id)
    card = services.scorecard_get_or_create(interview=interview, interviewer=request.user)
    rubric_keys = selectors.rubric_item_keys(interview)
    error = ""
    if request.method == "POST" and card.is_submitted:
        return HttpResponse("This scorecard was already submitted; it is final.", status=409)
    if request.method == "POST":
        form = ScorecardForm(request.POST, rubric_keys=rubric_keys)
        if form.is_valid():
            submit = form.cleaned_data["action"] == "submit"
            try:
                services.scorecard_save(
                    scorecard=card, ratings=form.ratings(), recommendation=form.cleaned_data["recommendation"],
                    notes=form.cleaned_data["notes"], ticks=form.ticks(), submit=submit,
                )
            except services.InterviewRefused as refusal:
                error = str(refusal)
            else:
                messages.success(request, "Scorecard submitted." if submit else "Draft saved.")
                return redirect("interview-transcript" if submit else "interview-scorecard", interview_id=interview.id)
    else:
        form = ScorecardForm(initial=_initial(card), rubric_keys=rubric_keys)
    ratings = [
        (field, label, "" if form[field].value() in (None, "") else str(form[field].value()))
        for field, label in RATING_DIMENSIONS
    ]
    context = {
        "interview": interview, "scorecard": card, "form": form, "error": error, "ratings": ratings,
        "scores": selectors.question_scores(interview), "ticked": set(form["tick"].value() or []),
    }
    return render(request, "interviews/scorecard.html", context, status=400 if error else 200)
