"""The candidate's pages: the question list and a question answered part by part.

Views parse the request, check permission, call one service or selector and render;
htmx requests get the named partial of the same template. What practice may show is
`selectors.practice_questions`: every view that names a question (or an attempt on
one) goes through it, and a question a live interview holds gets the locked page.
"""

import functools
import secrets
import time
from datetime import timedelta
from functools import wraps

from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import get_script_prefix
from django.utils import timezone, translation
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

import grading
from grading import services as grading_services
from grading.models import Attempt
from questions.models import Question as BankQuestion
from questions.models import Topic
from trainer import selectors, services
from trainer.forms import posted_answer, posted_scratchpad
from trainer.views.artifacts import artifact_response

TEMPLATE = "trainer/question_detail.html"
SCRATCHPAD_LINES = "kinds/verdict.html#scratchpad_lines"
MAX_SEED = 2**31 - 1


def _variant_seed(request, slug: str) -> int:
    """The variant this candidate is practising: drawn once, kept in the session."""
    key = f"variant:{slug}"
    if key not in request.session:
        request.session[key] = secrets.randbelow(MAX_SEED)
    return request.session[key]


def _practice_attempts(user):
    """The user's practice attempts. Interview attempts are reached only through the
    interview, which decides when its model answers and rubrics may be seen."""
    return Attempt.objects.select_related("question_version").filter(user=user, interview_link__isnull=True)



def _mark_opened(request, slug: str) -> None:
    """Remember when this variant was first opened, to time the answers to it."""
    request.session.setdefault(f"opened:{slug}", time.time())


def _time_taken(request, slug: str) -> timedelta | None:
    opened = request.session.get(f"opened:{slug}")
    return None if opened is None else timedelta(seconds=max(0.0, time.time() - opened))


def _gave_up(request, slug: str) -> bool:
    """Whether the solution of this variant is open: answers after it earn nothing."""
    return request.session.get(f"gave-up:{slug}", False)


def _hints_taken(request, slug: str) -> int:
    return request.session.get(f"hints:{slug}", 0)


def _version_or_404(request, slug: str):
    """The version to practise; 404 when practice does not offer it to this user, and
    PracticeLocked (the locked page, see `_locked_page`) while a live interview asks it."""
    try:
        return selectors.get_practice_version(slug, request.user)
    except BankQuestion.DoesNotExist:
        raise Http404("no such question") from None


def _practice_attempt_or_404(request, attempt_id: int) -> Attempt:
    """The user's own practice attempt, under the same rule as its question's page: an
    explain part's verdict shows its model answer, so an old attempt must not outlive a lock."""
    attempt = get_object_or_404(_practice_attempts(request.user), id=attempt_id)
    try:
        selectors.get_practice_question(request.user, id=attempt.question_version.question_id)
    except BankQuestion.DoesNotExist:
        raise Http404("no such attempt") from None
    return attempt


def _locked_page(view):
    """Answer PracticeLocked with a page that says why and when the question is back
    (403: the question exists, and the list says so too)."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except selectors.PracticeLocked as locked:
            return render(request, "trainer/question_locked.html", {"question": locked.question}, status=403)

    return wrapper


def _filters(request) -> dict:
    """The browser's filters from the query string; unknown values are ignored."""
    topics = {key for key, _ in Topic.choices}
    difficulty = request.GET.get("difficulty", "")
    return {
        "topic": request.GET.get("topic") if request.GET.get("topic") in topics else None,
        "difficulty": int(difficulty) if difficulty in ("1", "2", "3") else None,
        "kind": request.GET.get("kind") if request.GET.get("kind") in grading.kinds() else None,
        "status": request.GET.get("status") if request.GET.get("status") in selectors.STATUSES else None,
    }


@functools.lru_cache(maxsize=4096)
def _cached_row_cells(script_prefix: str, language: str | None, **cells) -> str:
    """The list row's cells (`row_cells` in the template) for these values. The key is
    every value the partial reads, plus what `{% url %}` and localisation read (the
    script prefix, the language), so an edited title or a lock taken or released makes
    a new key, never a stale row; the cache only keeps the rendering of the template."""
    return render_to_string("trainer/question_list.html#row_cells", cells)


def _row_cells(rows: list[selectors.QuestionRow]) -> list[tuple[selectors.QuestionRow, str]]:
    """Each row with its cells but its status (rendering 140 rows' links, localised
    numbers and truncated summaries on every request was most of the browser's time)."""
    prefix, language = get_script_prefix(), translation.get_language()
    return [(row, _cached_row_cells(
        prefix, language, seed_number=row.question.seed_number, slug=row.question.slug, title=row.question.title,
        summary=row.question.summary, topic_label=row.question.topic_label, difficulty=row.question.difficulty,
        kinds=row.kinds, locked=row.locked,
    )) for row in rows]


# What the browser reads of each question (the row's cells and selectors.question_rows);
# the rest (timestamps, flags) would only be parsed and thrown away 140 times a request.
_LISTED_FIELDS = ("id", "slug", "title", "summary", "topic", "difficulty", "seed_number", "part_kinds")


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@vary_on_headers("HX-Request")
def question_list(request):
    filters = _filters(request)
    questions = selectors.practice_questions(request.user).select_related(None).only(*_LISTED_FIELDS)
    rows = selectors.question_rows(user=request.user, questions=questions, now=timezone.now(), **filters)
    context = {
        "rows": _row_cells(rows), "filters": filters, "topics": Topic.choices, "kinds": grading.kinds(),
        "statuses": selectors.STATUSES,
    }
    template = "trainer/question_list.html#results" if request.htmx else "trainer/question_list.html"
    return render(request, template, context)


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@vary_on_headers("HX-Request")
@_locked_page
def question_detail(request, slug):
    version = _version_or_404(request, slug)
    seed = _variant_seed(request, slug)
    _mark_opened(request, slug)
    context = selectors.question_page(
        user=request.user,
        version=version,
        seed=seed,
        hints_taken=_hints_taken(request, slug),
        gave_up=_gave_up(request, slug),
    )
    return render(request, TEMPLATE, context)


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@_locked_page
def download_artifact(request, slug, file_name):
    """One of a lab question's artifacts, for the variant this candidate practises, under
    the question page's rule (404 where practice does not offer it, the locked page
    while a live interview asks it)."""
    version = _version_or_404(request, slug)
    artifact = selectors.question_artifact(version, _variant_seed(request, slug), file_name)
    if artifact is None:
        raise Http404("no such artifact")
    return artifact_response(artifact)


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@require_POST
@_locked_page
def new_variant(request, slug):
    version = _version_or_404(request, slug)
    # The page asked before posting this when code was typed (static/trainer/practice.js).
    services.drafts_discard(user=request.user, question_id=version.question_id)
    request.session[f"variant:{slug}"] = secrets.randbelow(MAX_SEED)
    request.session[f"hints:{slug}"] = 0
    request.session[f"gave-up:{slug}"] = False
    request.session.pop(f"opened:{slug}", None)
    return redirect("question-detail", slug=slug)


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@require_POST
@_locked_page
def take_hint(request, slug):
    version = _version_or_404(request, slug)
    available = len(selectors.version_question(version).hints)
    request.session[f"hints:{slug}"] = min(available, _hints_taken(request, slug) + 1)
    if request.htmx:
        context = selectors.question_page(
            user=request.user, version=version, seed=_variant_seed(request, slug),
            hints_taken=_hints_taken(request, slug), gave_up=False,
        )
        return render(request, f"{TEMPLATE}#hints", context)
    return redirect("question-detail", slug=slug)


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@require_POST
@_locked_page
def give_up(request, slug):
    _version_or_404(request, slug)
    request.session[f"gave-up:{slug}"] = True
    return redirect("question-detail", slug=slug)


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@require_POST
@_locked_page
def save_draft(request, slug, part_id):
    """Keep the code typed so far (the editor posts it a second after typing stops)."""
    version = _version_or_404(request, slug)
    try:
        services.draft_save(user=request.user, version=version, part_id=part_id, text=posted_answer(request.POST))
    except KeyError:
        raise Http404("no such part") from None
    except services.DraftRefused as refusal:
        return HttpResponseBadRequest(str(refusal))
    return HttpResponse(status=204)


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@require_POST
@_locked_page
def interpret_answer(request, slug, part_id):
    """Live preview: what the engine reads in the answer typed so far."""
    version = _version_or_404(request, slug)
    seed = _variant_seed(request, slug)
    try:
        if request.POST.get("preview") == "scratchpad":  # the scratchpad's lines, each read
            lines = grading_services.scratchpad_preview(version=version, part_id=part_id, seed=seed,
                                                        scratchpad=posted_scratchpad(request.POST))
            return render(request, SCRATCHPAD_LINES, {"lines": lines, "part_id": part_id})
        verdict = grading_services.attempt_interpret(
            version=version, part_id=part_id, seed=seed, answer=posted_answer(request.POST),
            scratchpad=posted_scratchpad(request.POST),
        )
    except grading_services.SubmitRefused as refusal:
        return HttpResponseBadRequest(str(refusal))
    return render(request, f"{TEMPLATE}#interpretation", {"reading": verdict, "part_id": part_id})


def _submit(request, slug, part_id, **options):
    """Accept an answer (or a run of the examples) and answer with the verdict partial."""
    version = _version_or_404(request, slug)
    try:
        result = grading_services.attempt_submit(
            user=request.user, version=version, part_id=part_id, seed=_variant_seed(request, slug),
            answer=posted_answer(request.POST), scratchpad=posted_scratchpad(request.POST), **options,
        )
    except grading_services.SubmitRefused as refusal:
        return HttpResponseBadRequest(str(refusal))
    if not request.htmx:
        return redirect("question-detail", slug=slug)
    context = selectors.verdict_context(result.attempt, part_id=part_id, reading=result.verdict)
    return render(request, f"{TEMPLATE}#verdict", context)


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@require_POST
@_locked_page
def submit_answer(request, slug, part_id):
    return _submit(request, slug, part_id, hints_used=_hints_taken(request, slug),
                   time_taken=_time_taken(request, slug), after_solution=_gave_up(request, slug))


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@require_POST
@_locked_page
def run_examples(request, slug, part_id):
    """Run a code answer on the part's visible examples (queued like an answer, never scored)."""
    return _submit(request, slug, part_id, purpose=Attempt.Purpose.EXAMPLES)


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@_locked_page
def attempt_status(request, attempt_id):
    """The verdict partial, polled while the attempt is graded; polling ends with 286."""
    attempt = _practice_attempt_or_404(request, attempt_id)
    response = render(request, f"{TEMPLATE}#verdict", selectors.verdict_context(attempt, part_id=attempt.part_id))
    if attempt.is_finished:
        response.status_code = HttpResponseStopPolling.status_code
    return response


@login_required
@permission_required("grading.submit_attempt", raise_exception=True)
@require_POST
@_locked_page
def self_assess(request, attempt_id):
    """The candidate ticks the rubric items their explanation covered."""
    attempt = _practice_attempt_or_404(request, attempt_id)
    try:
        grading_services.attempt_self_assess(attempt, request.POST.getlist("item"))
    except grading_services.SubmitRefused as refusal:
        return HttpResponseBadRequest(str(refusal))
    if not request.htmx:
        return redirect("question-detail", slug=attempt.question_version.question.slug)
    return render(request, f"{TEMPLATE}#verdict", selectors.verdict_context(attempt, part_id=attempt.part_id))


@login_required
@permission_required("grading.review_attempts", raise_exception=True)
def review(request):
    """Interviewers: the latest attempts in the interviews they sit on, and the practice
    of candidates who share it (selectors.review_attempts says who sees what)."""
    return render(request, "trainer/review.html", {"rows": selectors.review_attempts(request.user, limit=100)})
