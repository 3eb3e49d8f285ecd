"""Forms of the interview pages: parse and validate input; services make the changes."""

from dataclasses import dataclass
from datetime import timedelta

from django import forms

from questions.models import Topic
from questions.selectors import visible_questions
from trainer.interviews.evidence import JudgedPart, PartEvidence
from trainer.interviews.models import Interview, Recommendation
from trainer.interviews.people import clean_name
from trainer.interviews.scorecards import MAX_REASON_CHARS, JudgementInput
from trainer.interviews.selectors import template_owner_note, visible_templates


class TemplateChoiceField(forms.ModelChoiceField):
    """A template, labelled with whose it is as the viewer reads it ("shared by alice")."""

    def __init__(self, *args, viewer=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.viewer = viewer

    def label_from_instance(self, template):
        return f"{template.name} ({template_owner_note(template, self.viewer)})"


class InterviewCreateForm(forms.Form):
    """Questions come from the bank (filtered by topic and difficulty on the page) or
    from a saved template; ticked questions win over the template."""

    title = forms.CharField(max_length=200)
    topic = forms.ChoiceField(choices=[("", "Any topic")] + list(Topic.choices), required=False)
    difficulty = forms.ChoiceField(choices=[("", "Any difficulty"), ("1", "1"), ("2", "2"), ("3", "3")], required=False)
    questions = forms.ModelMultipleChoiceField(queryset=None, required=False)
    template = TemplateChoiceField(queryset=None, required=False, empty_label="No template")
    time_limit_minutes = forms.IntegerField(min_value=5, max_value=240, initial=45, label="Time limit (minutes)")
    hints_allowed = forms.BooleanField(required=False, initial=True, label="Hints available")
    solutions_allowed = forms.BooleanField(required=False, label="Solutions available after the interview")
    email_required = forms.BooleanField(required=False, label="Ask the candidate for an email")
    save_as_template = forms.CharField(max_length=200, required=False, label="Save these questions as a template named")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["questions"].queryset = visible_questions(user)
        # Only templates the user may see can be applied: one rule, in the selector.
        self.fields["template"].queryset = visible_templates(user)
        self.fields["template"].viewer = user
        self.user = user

    def clean(self):
        cleaned = super().clean()
        chosen = list(cleaned.get("questions") or [])
        template = cleaned.get("template")
        if not chosen and template is not None:
            # Only the template's questions this interviewer may see: a template can
            # outlive a question's release.
            chosen = list(visible_questions(self.user).filter(id__in=template.questions.values("id")))
        if not chosen:
            raise forms.ValidationError("Pick at least one question, or a template.")
        cleaned["chosen_questions"] = chosen
        cleaned["time_limit"] = timedelta(minutes=cleaned.get("time_limit_minutes") or 0)
        return cleaned

    def filters(self) -> dict:
        """The topic and difficulty filters as typed, whether or not the form is valid."""
        data = self.data if self.is_bound else {}
        topic = data.get("topic", "")
        difficulty = data.get("difficulty", "")
        return {
            "topic": topic if topic in Topic.values else None,
            "difficulty": int(difficulty) if difficulty in ("1", "2", "3") else None,
        }

    def selected_ids(self) -> set[int]:
        values = self.data.getlist("questions") if self.is_bound and hasattr(self.data, "getlist") else []
        return {int(value) for value in values if value.isdigit()}


class TemplateEditForm(forms.Form):
    name = forms.CharField(max_length=200)
    shared = forms.BooleanField(required=False, label="Shared with the other interviewers")


class JoinForm(forms.Form):
    """Joining by the invitation link. A guest gives the name the panel will see; an
    account is named by itself (no name field). The email field is there, and required,
    only when the interview asks for one."""

    name = forms.CharField(max_length=150, label="Your name",
                           error_messages={"required": "Tell us your name: the interviewer will see it."})
    email = forms.EmailField(label="Your email", error_messages={
        "required": "This interview asks for your email address.",
        "invalid": "Enter a valid email address, such as ada@example.com.",
    })

    def __init__(self, *args, interview: Interview, user, **kwargs):
        super().__init__(*args, **kwargs)
        if user.is_authenticated:
            del self.fields["name"]
            self.fields["email"].initial = user.email
        if not interview.email_required:
            del self.fields["email"]

    def clean_name(self) -> str:
        name = clean_name(self.cleaned_data["name"])
        if not name:
            raise forms.ValidationError("Tell us your name: the interviewer will see it.")
        return name


class NoteForm(forms.Form):
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=10_000, label="Private note")


class AddInterviewerForm(forms.Form):
    username = forms.CharField(max_length=150, label="Add an interviewer (username)")


@dataclass(frozen=True)
class PartFields:
    """One part's judgement fields on the scorecard form, beside its evidence."""

    evidence: PartEvidence
    confirm: forms.BoundField
    override: forms.BoundField
    reason: forms.BoundField
    tick: forms.BoundField | None


class ScorecardForm(forms.Form):
    """Per part: confirm the auto score, or override it (0..1, with a reason), or tick
    the rubric items covered; then the overall recommendation and notes. Part fields are
    named "<prefix>-confirm", "-override", "-reason", "-tick" after `part_prefix`."""

    recommendation = forms.ChoiceField(choices=[("", "—")] + list(Recommendation.choices), required=False)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 5}), required=False, max_length=20_000)
    action = forms.ChoiceField(choices=[("save", "Save draft"), ("submit", "Submit")])

    def __init__(self, *args, evidence: list[PartEvidence], **kwargs):
        super().__init__(*args, **kwargs)
        self.evidence = evidence
        for item in evidence:
            prefix = part_prefix(item)
            self.fields[f"{prefix}-confirm"] = forms.BooleanField(required=False)
            self.fields[f"{prefix}-override"] = forms.FloatField(
                required=False, min_value=0.0, max_value=1.0, widget=forms.NumberInput(attrs={"step": "0.05"})
            )
            self.fields[f"{prefix}-reason"] = forms.CharField(
                required=False, max_length=MAX_REASON_CHARS, widget=forms.Textarea(attrs={"rows": 2})
            )
            if item.rubric:
                self.fields[f"{prefix}-tick"] = forms.MultipleChoiceField(
                    required=False, widget=forms.CheckboxSelectMultiple,
                    choices=[(rubric_item.id, rubric_item.text) for rubric_item in item.rubric],
                )

    @staticmethod
    def initial_from(judged: list[JudgedPart], scorecard) -> dict:
        initial = {"recommendation": scorecard.recommendation, "notes": scorecard.notes}
        for part in judged:
            if part.judgement is None:
                continue
            prefix = part_prefix(part.evidence)
            initial.update({
                f"{prefix}-confirm": part.judgement.confirmed, f"{prefix}-override": part.judgement.override_score,
                f"{prefix}-reason": part.judgement.reason, f"{prefix}-tick": list(part.ticked),
            })
        return initial

    def clean(self):
        cleaned = super().clean()
        for item in self.evidence:
            prefix = part_prefix(item)
            if cleaned.get(f"{prefix}-override") is not None and not (cleaned.get(f"{prefix}-reason") or "").strip():
                self.add_error(f"{prefix}-reason", f"{item.label}: say why you override the auto score.")
        return cleaned

    def parts(self) -> list[PartFields]:
        rows = []
        for item in self.evidence:
            prefix = part_prefix(item)
            tick = self[f"{prefix}-tick"] if item.rubric else None
            rows.append(PartFields(item, self[f"{prefix}-confirm"], self[f"{prefix}-override"],
                                   self[f"{prefix}-reason"], tick))
        return rows

    def judgements(self) -> dict[tuple[int, str], JudgementInput]:
        data = self.cleaned_data
        return {
            item.key: JudgementInput(
                confirmed=bool(data.get(f"{part_prefix(item)}-confirm")),
                override_score=data.get(f"{part_prefix(item)}-override"),
                reason=data.get(f"{part_prefix(item)}-reason") or "",
                rubric_ticked=tuple(data.get(f"{part_prefix(item)}-tick") or ()),
            )
            for item in self.evidence
        }


def part_prefix(item: PartEvidence) -> str:
    return f"q{item.question.id}-{item.part_id}"
