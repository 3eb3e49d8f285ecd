"""Forms of the interview pages: parse and validate input; services make the changes."""

from datetime import timedelta

from django import forms

from questions.models import Topic
from questions.selectors import visible_questions
from trainer.interviews.models import RATING_DIMENSIONS, Interview, Recommendation
from trainer.interviews.people import clean_name
from trainer.interviews.selectors import rubric_tick_value, template_owner_note, visible_templates

RATING_CHOICES = [("", "—")] + [(str(value), str(value)) for value in (1, 2, 3, 4)]


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


class ScorecardForm(forms.Form):
    """Ratings 1 to 4 per dimension, a recommendation, notes, and the rubric items ticked
    (`tick` values are "<interview question id>/<part id>/<item id>")."""

    technical_accuracy = forms.TypedChoiceField(choices=RATING_CHOICES, coerce=int, empty_value=None, required=False)
    problem_solving = forms.TypedChoiceField(choices=RATING_CHOICES, coerce=int, empty_value=None, required=False)
    communication = forms.TypedChoiceField(choices=RATING_CHOICES, coerce=int, empty_value=None, required=False)
    recommendation = forms.ChoiceField(choices=[("", "—")] + list(Recommendation.choices), required=False)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 5}), required=False, max_length=20_000)
    tick = forms.MultipleChoiceField(required=False)
    action = forms.ChoiceField(choices=[("save", "Save draft"), ("submit", "Submit")])

    def __init__(self, *args, rubric_keys: set[tuple[int, str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        values = [rubric_tick_value(*key) for key in sorted(rubric_keys)]
        self.fields["tick"].choices = [(value, value) for value in values]

    def ratings(self) -> dict:
        return {field: self.cleaned_data.get(field) for field, _ in RATING_DIMENSIONS}

    def ticks(self) -> list[tuple[int, str, str]]:
        ticks = []
        for value in self.cleaned_data.get("tick") or []:
            question_id, part_id, item_id = value.split("/", 2)
            ticks.append((int(question_id), part_id, item_id))
        return ticks
