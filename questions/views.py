"""Browser authoring for question authors (the `admin` role): preview any variant
exactly as a candidate sees it, validate, export to a file, import a file.

Anonymous users are sent to log in; signed-in users without the
`questions.author_questions` permission get 403.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from questions import selectors, services
from questions.forms import QuestionImportForm
from questions.models import QuestionVersion
from questions.rendering import render_question
from questions.validation import validate_text


def author_required(view):
    return login_required(permission_required(selectors.AUTHOR_PERMISSION, raise_exception=True)(view))


def _version_or_404(request, slug: str) -> QuestionVersion:
    number = request.GET.get("version")
    try:
        return selectors.get_question_version(
            slug, request.user, number=int(number) if number and number.isdigit() else None
        )
    except QuestionVersion.DoesNotExist:
        raise Http404(f"no question {slug!r}") from None


def _requested_choices(request, question) -> tuple[dict, list[str]]:
    """Parameter choices named in the query string (`?gpu=h200&batch=8`), checked
    against the question's own choices; unknown values are reported, not used."""
    chosen, unknown = {}, []
    for param in question.params:
        wanted = request.GET.get(param.name)
        if not wanted:
            continue
        matching = [choice for choice in param.choices if str(choice) == wanted]
        if matching:
            chosen[param.name] = matching[0]
        else:
            unknown.append(f"{param.name}={wanted}")
    return chosen, unknown


@require_GET
@author_required
def preview(request, slug):
    version = _version_or_404(request, slug)
    question = version.as_question()
    seed_text = request.GET.get("seed", "0")
    seed = int(seed_text) if seed_text.isdigit() else 0
    choices, unknown_choices = _requested_choices(request, question)
    rendered, render_error = None, ""
    try:
        rendered = render_question(question, seed, choices=choices)
    except Exception as error:  # a preview must show a broken question, not fail on it
        render_error = f"{type(error).__name__}: {error}"
    return render(
        request,
        "questions/preview.html",
        {
            "version": version,
            "param_rows": [
                {
                    "name": param.name,
                    "options": [
                        (str(choice), param.name in choices and choices[param.name] == choice)
                        for choice in param.choices
                    ],
                }
                for param in question.params
            ],
            "seed": seed,
            "question": rendered,
            "hints_shown": rendered.hints_html if rendered else (),
            "render_error": render_error,
            "unknown_choices": unknown_choices,
            "preview_variant": True,  # a lab's download links would serve practice's variant, not this one
        },
    )


@require_GET
@author_required
def validate(request, slug):
    version = _version_or_404(request, slug)
    report = validate_text(version.source_text, f"{slug} v{version.number}")
    return render(request, "questions/validate.html", {"version": version, "report": report})


@require_GET
@author_required
def export(request, slug):
    version = _version_or_404(request, slug)
    response = HttpResponse(version.source_text, content_type="application/yaml; charset=utf-8")
    filename = f"{version.question.seed_number:03d}-{version.question.slug}.yaml"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_http_methods(["GET", "POST"])
@author_required
def import_question(request):
    form = QuestionImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        result = services.question_save_text(
            form.cleaned_data["file"],
            origin=QuestionVersion.Origin.BROWSER,
            user=request.user,
            release_new=form.cleaned_data["release"],
            report=form.validation_report,
        )
        if result.ok:
            if result.created_version:
                messages.success(request, f"Stored {result.question.slug} as version {result.version.number}.")
            else:
                messages.info(request, f"{result.question.slug} already has exactly this text; nothing stored.")
            return redirect("questions:preview", slug=result.question.slug)
        for problem in result.problems:
            form.add_error("file", f"line {problem.line}: {problem.message}" if problem.line else problem.message)
    return render(request, "questions/import.html", {"form": form}, status=400 if form.errors else 200)
