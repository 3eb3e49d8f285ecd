"""The candidate's side: joining by link, the timed room, and every answer-side write.

Only the interview's candidate reaches these (anyone else: 404). Every write goes to a
service that refuses it once the clock has run out; the refusal is a 409 carrying
`HX-Refresh`, so an htmx page reloads into its closed state.
"""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

from grading import services as grading_services
from grading.models import Attempt
from trainer import selectors as practice_selectors
from trainer.forms import posted_answer, posted_scratchpad
from trainer.interviews import selectors, services
from trainer.interviews.forms import JoinForm
from trainer.interviews.models import Interview, InterviewQuestion
from trainer.views.artifacts import artifact_response

ROOM = "interviews/room.html"
# Guests have no password: the session is their only key to the interview.
GUEST_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _candidate_interview_or_404(request, interview_id: int) -> Interview:
    try:
        interview = selectors.get_candidate_interview(request.user, interview_id)
    except Interview.DoesNotExist:
        raise Http404("no such interview") from None
    services.interview_close_if_expired(interview)
    return interview


def _question_or_404(interview: Interview, position: int) -> InterviewQuestion:
    try:
        return selectors.get_interview_question(interview, position)
    except InterviewQuestion.DoesNotExist:
        raise Http404("no such question") from None


def _closed() -> HttpResponse:
    response = HttpResponse("The interview has ended; answers are no longer accepted.", status=409)
    response["HX-Refresh"] = "true"
    return response


def _room_url(interview: Interview, position: int) -> str:
    return f"{reverse('interview-room', args=[interview.id])}?q={position}"


def interview_join(request, token):
    """The invitation link. GET shows what the interview is (never its questions); POST
    uses the link, for the logged-in user or for a new guest identity (named as the
    guest typed), once; an invalid form (no name, a bad email) uses nothing. A used
    link, or any link of a closed interview, gets a page that says so (403)."""
    interview = Interview.objects.filter(invite_token=token).select_related("created_by").first()
    if interview is None:
        raise Http404("no such invitation")
    if request.user.is_authenticated and interview.candidate_id == request.user.id:
        return redirect("interview-room", interview_id=interview.id)
    form = JoinForm(request.POST if request.method == "POST" else None, interview=interview, user=request.user)
    error = ""
    if request.method == "POST" and not interview.is_closed:
        user = request.user if request.user.is_authenticated else None
        if form.is_valid():
            try:
                interview = services.invite_accept(
                    token=token, user=user, guest_name=form.cleaned_data.get("name", ""),
                    email=form.cleaned_data.get("email", ""),
                )
            except services.InterviewRefused as refusal:
                error = str(refusal)
            else:
                if user is None:
                    login(request, interview.candidate, backend=GUEST_BACKEND)
                return redirect("interview-room", interview_id=interview.id)
    context = {
        "interview": interview, "form": form, "error": error,
        "used": interview.invite_used_at is not None, "closed": interview.is_closed,
        "question_count": interview.questions.count(),
    }
    status = 403 if error or interview.invite_used_at is not None or interview.is_closed else 200
    return render(request, "interviews/join.html", context, status=status)


@login_required
def interview_room(request, interview_id):
    """The timed room (`?q=` picks the question; default: where the candidate was)."""
    interview = _candidate_interview_or_404(request, interview_id)
    if interview.status == Interview.Status.INVITED:
        return render(request, ROOM, {"interview": interview, "question_count": interview.questions.count()})
    if interview.is_closed and not interview.solutions_allowed:
        # Outside the interview its questions stay hidden unless solutions were shared.
        return render(request, ROOM, {**selectors.room_ending(interview), "ended": True})
    position = request.GET.get("q", "")
    position = int(position) if position.isdigit() else (selectors.last_opened_position(interview) or 1)
    question = _question_or_404(interview, position)
    services.question_open(interview=interview, user=request.user, question=question)
    return render(request, ROOM, selectors.room(interview, question))


@login_required
def artifact_download(request, interview_id, position, file_name):
    """One of a lab question's artifacts, under the room's rule: only the candidate,
    once the interview has started, and after it closes only if solutions were shared."""
    interview = _candidate_interview_or_404(request, interview_id)
    if interview.status == Interview.Status.INVITED or (interview.is_closed and not interview.solutions_allowed):
        raise Http404("no such artifact")
    question = _question_or_404(interview, position)
    artifact = practice_selectors.question_artifact(question.question_version, question.variant_seed, file_name)
    if artifact is None:
        raise Http404("no such artifact")
    return artifact_response(artifact)


@login_required
def room_status(request, interview_id):
    """Whether the interview is still open, polled by the room so the candidate learns
    of the end without a click: 204 while it is open; once it has closed (its clock ran
    out, which this request may be the one to notice, or the panel ended it), the
    partial that says so, with 286, which ends the polling."""
    interview = _candidate_interview_or_404(request, interview_id)
    if not interview.is_closed:
        return HttpResponse(status=204)
    response = render(request, f"{ROOM}#status", selectors.room_ending(interview))
    response.status_code = HttpResponseStopPolling.status_code
    return response


@login_required
@require_POST
def interview_start(request, interview_id):
    interview = _candidate_interview_or_404(request, interview_id)
    services.interview_start(interview=interview, user=request.user)
    return redirect("interview-room", interview_id=interview.id)


@login_required
@require_POST
def answer_interpret(request, interview_id, position, part_id):
    """Live preview of how the engine reads the answer typed so far (not recorded)."""
    interview = _candidate_interview_or_404(request, interview_id)
    if not interview.is_open:
        return _closed()
    question = _question_or_404(interview, position)
    try:
        if request.POST.get("preview") == "scratchpad":  # the scratchpad's lines, each read (not recorded)
            lines = grading_services.scratchpad_preview(
                version=question.question_version, part_id=part_id, seed=question.variant_seed,
                scratchpad=posted_scratchpad(request.POST))
            return render(request, "kinds/verdict.html#scratchpad_lines", {"lines": lines, "part_id": part_id})
        reading = grading_services.attempt_interpret(
            version=question.question_version, part_id=part_id, seed=question.variant_seed,
            answer=posted_answer(request.POST), scratchpad=posted_scratchpad(request.POST),
        )
    except grading_services.SubmitRefused as refusal:
        return HttpResponseBadRequest(str(refusal))
    return render(request, f"{ROOM}#interpretation", {"reading": reading, "part_id": part_id})


@login_required
@require_POST
@vary_on_headers("HX-Request")
def answer_submit(request, interview_id, position, part_id):
    interview = _candidate_interview_or_404(request, interview_id)
    question = _question_or_404(interview, position)
    try:
        result = services.answer_submit(interview=interview, user=request.user, question=question,
                                        part_id=part_id, answer=posted_answer(request.POST),
                                        scratchpad=posted_scratchpad(request.POST))
    except services.InterviewClosed:
        return _closed()
    except (services.InterviewRefused, grading_services.SubmitRefused) as refusal:
        if not request.htmx:
            return HttpResponseBadRequest(str(refusal))
        # htmx swaps only successful responses: say why in the part's verdict slot.
        return render(request, f"{ROOM}#verdict", {"interview": interview, "part_id": part_id, "refusal": str(refusal)})
    if not request.htmx:
        return redirect(_room_url(interview, position))
    context = {"interview": interview, "part_id": part_id, "attempt": result.attempt, "reading": result.verdict}
    return render(request, f"{ROOM}#verdict", context)


@login_required
def attempt_status(request, interview_id, attempt_id):
    """The partial of an attempt being graded, polled until it is done (then 286, which
    ends the polling): the verdict of an answer, or the result of a code run."""
    interview = _candidate_interview_or_404(request, interview_id)
    attempt = get_object_or_404(
        Attempt, id=attempt_id, user=request.user, interview_link__question__interview=interview
    )
    if attempt.purpose == Attempt.Purpose.EXAMPLES:
        response = render(request, f"{ROOM}#code_run",
                          {"interview": interview, "part_id": attempt.part_id, "run_attempt": attempt})
    else:
        response = render(request, f"{ROOM}#verdict",
                          {"interview": interview, "part_id": attempt.part_id, "attempt": attempt})
    if attempt.is_finished:
        response.status_code = HttpResponseStopPolling.status_code
    return response


@login_required
@require_POST
@vary_on_headers("HX-Request")
def hint_take(request, interview_id, position):
    interview = _candidate_interview_or_404(request, interview_id)
    question = _question_or_404(interview, position)
    try:
        services.hint_take(interview=interview, user=request.user, question=question)
    except services.InterviewClosed:
        return _closed()
    except services.InterviewRefused as refusal:
        return HttpResponse(str(refusal), status=403)
    if request.htmx:
        return render(request, f"{ROOM}#hints", selectors.room(interview, question))
    return redirect(_room_url(interview, position))


@login_required
@require_POST
def code_snapshot(request, interview_id, position, part_id):
    """The editor posts its content every few seconds when it changed: 204 either way."""
    interview = _candidate_interview_or_404(request, interview_id)
    question = _question_or_404(interview, position)
    try:
        services.code_snapshot(interview=interview, user=request.user, question=question, part_id=part_id,
                               source=request.POST.get("source", ""))
    except services.InterviewClosed:
        return _closed()
    except services.InterviewRefused as refusal:
        return HttpResponseBadRequest(str(refusal))
    return HttpResponse(status=204)


@login_required
@require_POST
@vary_on_headers("HX-Request")
def code_run(request, interview_id, position, part_id):
    """Run the code on the part's visible examples (queued for the sandbox, as practice's
    Run is; never the answer) and record the run. htmx gets the run's partial, which
    polls until the result is in, or says at once why nothing ran."""
    interview = _candidate_interview_or_404(request, interview_id)
    question = _question_or_404(interview, position)
    try:
        run = services.code_run(interview=interview, user=request.user, question=question, part_id=part_id,
                                source=request.POST.get("answer", ""))
    except services.InterviewClosed:
        return _closed()
    except services.InterviewRefused as refusal:
        if not request.htmx:
            return HttpResponseBadRequest(str(refusal))
        # htmx swaps only successful responses: say why in the part's run slot.
        run = services.CodeRun(None, True, str(refusal))
    if not request.htmx:
        if run.attempt is None:  # the room shows the latest run; say why this one did not
            messages.warning(request, f"Not run: {run.feedback}")
        return redirect(_room_url(interview, position))
    context = {"interview": interview, "part_id": part_id, "run": run, "run_attempt": run.attempt}
    return render(request, f"{ROOM}#code_run", context)
