"""Review: the transcript with playback, the exports, and each panel member's scorecard."""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpResponse
from django.shortcuts import redirect, render

from trainer.interviews import evidence as evidence_module
from trainer.interviews import scorecards, transcript
from trainer.interviews.forms import ScorecardForm
from trainer.interviews.services import InterviewRefused
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


def _scorecard_page(request, interview, card, form, evidence, error=""):
    context = {
        "interview": interview, "scorecard": card, "form": form, "error": error, "parts": form.parts(),
        "time_rule": evidence_module.TIME_ON_PART_RULE,
    }
    return render(request, "interviews/scorecard.html", context, status=400 if error or form.errors else 200)


@login_required
def scorecard(request, interview_id):
    """The user's own scorecard, pre-filled from what the interview measured: a draft
    they can save until they submit it. Each panel member has their own; no URL names
    another's."""
    interview = panel_interview_or_404(request, interview_id)
    evidence = evidence_module.part_evidence(interview)
    card = scorecards.scorecard_open(interview=interview, interviewer=request.user, evidence=evidence)
    if request.method == "POST" and card.is_submitted:
        return HttpResponse("This scorecard was already submitted; it is final.", status=409)
    if request.method != "POST":
        judged = evidence_module.judged_parts(evidence, card.judgements.all())
        form = ScorecardForm(initial=ScorecardForm.initial_from(judged, card), evidence=evidence)
        return _scorecard_page(request, interview, card, form, evidence)
    form = ScorecardForm(request.POST, evidence=evidence)
    if not form.is_valid():
        return _scorecard_page(request, interview, card, form, evidence)
    submit = form.cleaned_data["action"] == "submit"
    try:
        card = scorecards.scorecard_save(
            scorecard=card, judgements=form.judgements(), recommendation=form.cleaned_data["recommendation"],
            notes=form.cleaned_data["notes"],
        )
        if submit:  # the draft is saved first, so a refused submit loses nothing
            card = scorecards.scorecard_submit(scorecard=card)
    except InterviewRefused as refusal:
        return _scorecard_page(request, interview, card, form, evidence, error=str(refusal))
    messages.success(request, "Scorecard submitted." if submit else "Draft saved.")
    return redirect("interview-transcript" if submit else "interview-scorecard", interview_id=interview.id)
