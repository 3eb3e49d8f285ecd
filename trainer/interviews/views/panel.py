"""The panel's pages: the list, creating an interview, templates, watching it live, notes.

A panel member is the interview's creator, an interviewer added to it, or an admin
(trainer.interviews.selectors holds the rules); anyone else gets 404 for an interview.
A template the user cannot see is a 404 too; one they see but did not create, 403.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

from questions.models import Topic
from questions.selectors import visible_questions
from trainer.interviews import selectors, services, template_services
from trainer.interviews.forms import AddInterviewerForm, InterviewCreateForm, NoteForm, TemplateEditForm
from trainer.interviews.models import Interview, InterviewTemplate

MONITOR = "interviews/monitor.html"
CREATE = "interviews/create.html"


def panel_interview_or_404(request, interview_id: int) -> Interview:
    """The interview if the user is on its panel; closed first if its clock ran out."""
    try:
        interview = selectors.get_panel_interview(request.user, interview_id)
    except Interview.DoesNotExist:
        raise Http404("no such interview") from None
    services.interview_close_if_expired(interview)
    return interview


@login_required
def interview_list(request):
    """The interviews the user runs (panel) and the ones they take (candidate)."""
    panel = selectors.panel_interviews(request.user)
    context = {
        "panel_rows": selectors.interview_rows(panel),
        "candidate_rows": selectors.interview_rows(selectors.candidate_interviews(request.user)),
        "can_create": selectors.can_conduct_interviews(request.user),
    }
    return render(request, "interviews/list.html", context)


def _question_choices(form: InterviewCreateForm, user) -> list:
    """The bank under the page's filters, plus every question already ticked."""
    filters = form.filters()
    selected = form.selected_ids()
    questions = visible_questions(user).select_related(None)
    return [
        (question, question.id in selected)
        for question in questions
        if question.id in selected or (
            (filters["topic"] is None or question.topic == filters["topic"])
            and (filters["difficulty"] is None or question.difficulty == filters["difficulty"])
        )
    ]


@login_required
@permission_required(selectors.CONDUCT_PERMISSION, raise_exception=True)
@vary_on_headers("HX-Request")
def interview_create(request):
    """GET shows the form (htmx: only the question choices, refiltered); POST creates."""
    if request.method == "POST":
        form = InterviewCreateForm(request.POST, user=request.user)
        if form.is_valid():
            data = form.cleaned_data
            if data["save_as_template"]:
                template_services.template_save(name=data["save_as_template"], created_by=request.user,
                                                questions=data["chosen_questions"])
            interview = services.interview_create(
                created_by=request.user, title=data["title"], questions=data["chosen_questions"],
                time_limit=data["time_limit"], hints_allowed=data["hints_allowed"],
                solutions_allowed=data["solutions_allowed"], email_required=data["email_required"],
            )
            messages.success(request, "Interview created. Send the candidate the invitation link.")
            return redirect("interview-monitor", interview_id=interview.id)
    else:
        # Bound to the query string, so the no-JavaScript "Filter" button (a GET of the
        # same form) keeps what was typed; its errors are only shown after a POST.
        form = InterviewCreateForm(request.GET or None, user=request.user)
    context = {"form": form, "choices": _question_choices(form, request.user), "topics": Topic.choices}
    template = f"{CREATE}#question_choices" if request.htmx else CREATE
    return render(request, template, context)


def _owned_template_or_refuse(request, template_id: int) -> InterviewTemplate:
    """The template if the user created it; 404 if they cannot see it, 403 if they can
    see it (shared, or an admin) but it is someone else's."""
    try:
        template = selectors.visible_templates(request.user).get(id=template_id)
    except InterviewTemplate.DoesNotExist:
        raise Http404("no such template") from None
    if not selectors.owns_template(request.user, template):
        raise PermissionDenied("only the template's creator can change it")
    return template


@login_required
@permission_required(selectors.CONDUCT_PERMISSION, raise_exception=True)
def template_list(request):
    """The templates the user may start interviews from, each saying whose it is; the
    user's own can be renamed, shared and deleted here."""
    rows = [
        (template, selectors.template_owner_note(template, request.user),
         TemplateEditForm(initial={"name": template.name, "shared": template.shared},
                          prefix=f"t{template.id}") if selectors.owns_template(request.user, template) else None)
        for template in selectors.template_rows(request.user)
    ]
    return render(request, "interviews/templates.html", {"rows": rows})


@login_required
@require_POST
def template_edit(request, template_id):
    template = _owned_template_or_refuse(request, template_id)
    form = TemplateEditForm(request.POST, prefix=f"t{template.id}")
    if not form.is_valid():
        return HttpResponseBadRequest("a template needs a name of at most 200 characters")
    template_services.template_update(template=template, user=request.user, name=form.cleaned_data["name"],
                                      shared=form.cleaned_data["shared"])
    messages.success(request, f"Template {template.name!r} saved" + (", shared." if template.shared else ", private."))
    return redirect("interview-templates")


@login_required
@require_POST
def template_delete(request, template_id):
    template = _owned_template_or_refuse(request, template_id)
    template_services.template_delete(template=template, user=request.user)
    messages.success(request, "Template deleted. Interviews made from it keep their questions.")
    return redirect("interview-templates")


@login_required
def interview_monitor(request, interview_id):
    interview = panel_interview_or_404(request, interview_id)
    context = selectors.monitor(interview)
    context.update({
        "note_form": NoteForm(), "add_form": AddInterviewerForm(),
        "invite_url": request.build_absolute_uri(reverse("interview-join", args=[interview.invite_token])),
        "can_add": interview.created_by_id == request.user.id or selectors.sees_all_interviews(request.user),
    })
    return render(request, MONITOR, context)


@login_required
def interview_timeline(request, interview_id):
    """The live timeline partial, polled. Nothing new since `after`: 204 (htmx keeps the
    page as it is), unless the page is waiting for an answer or a code run to finish
    (`grading`), whose result changes an entry without adding one. Once the interview is
    closed and nothing is left to wait for: the final timeline with 286, which ends the
    polling."""
    interview = panel_interview_or_404(request, interview_id)
    after = request.GET.get("after", "")
    waiting = bool(request.GET.get("grading"))
    if after.isdigit() and not selectors.timeline_after(interview, int(after)) and not interview.is_closed \
            and not waiting:
        return HttpResponse(status=204)
    context = selectors.timeline_context(interview)
    response = render(request, f"{MONITOR}#timeline", context)
    if interview.is_closed and not context["grading"]:
        response.status_code = HttpResponseStopPolling.status_code
    return response


@login_required
def interview_live_code(request, interview_id):
    """The candidate's code as they type it, polled: each code part's editor as last
    recorded, marked when it differs from the last answer. Nothing new since `after`:
    204. Once the interview is closed: the final state (the code its close submitted
    included) with 286, which ends the polling."""
    interview = panel_interview_or_404(request, interview_id)
    after = request.GET.get("after", "")
    if after.isdigit() and not selectors.timeline_after(interview, int(after)) and not interview.is_closed:
        return HttpResponse(status=204)
    response = render(request, f"{MONITOR}#live_code", selectors.live_code_context(interview))
    if interview.is_closed:
        response.status_code = HttpResponseStopPolling.status_code
    return response


@login_required
@require_POST
@vary_on_headers("HX-Request")
def note_add(request, interview_id):
    interview = panel_interview_or_404(request, interview_id)
    form = NoteForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("the note is empty or too long")
    try:
        services.note_add(interview=interview, author=request.user, text=form.cleaned_data["text"])
    except services.InterviewRefused as refusal:
        return HttpResponseBadRequest(str(refusal))
    if request.htmx:
        interview.refresh_from_db()
        return render(request, f"{MONITOR}#timeline", selectors.timeline_context(interview))
    return redirect("interview-monitor", interview_id=interview.id)


@login_required
@require_POST
def interviewer_add(request, interview_id):
    interview = panel_interview_or_404(request, interview_id)
    form = AddInterviewerForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("give a username")
    try:
        user = services.interviewer_add(interview=interview, added_by=request.user,
                                        username=form.cleaned_data["username"])
    except services.InterviewRefused as refusal:
        return HttpResponse(str(refusal), status=403)
    messages.success(request, f"{user.username} is on the panel.")
    return redirect("interview-monitor", interview_id=interview.id)


@login_required
@require_POST
def interview_end(request, interview_id):
    interview = panel_interview_or_404(request, interview_id)
    services.interview_end(interview=interview, ended_by=request.user)
    return redirect("interview-monitor", interview_id=interview.id)
