"""Forms for browser authoring: each runs the bank's validation in `clean`, so an
invalid question never reaches the service that stores it."""

from __future__ import annotations

import re

from django import forms

from questions.models import Question
from questions.validation import FileReport, validate_text

MAX_UPLOAD_BYTES = 256 * 1024  # the largest bank file is a few KB
TOP_LEVEL_INTERVIEW_ONLY = re.compile(r"^interview_only:[^\n]*(?:\n|\Z)", re.MULTILINE)


def with_interview_only(text: str, interview_only: bool) -> str:
    """The question's YAML with its top-level `interview_only` key set (removed when
    false). The admin's checkbox writes through the text, so the stored version, the
    file an author exports and the listing field never disagree."""
    text = TOP_LEVEL_INTERVIEW_ONLY.sub("", text)
    if interview_only:
        text = text.rstrip("\n") + "\ninterview_only: true\n"
    return text


def problems_as_errors(report: FileReport) -> list[forms.ValidationError]:
    return [
        forms.ValidationError(f"line {problem.line}: {problem.message}" if problem.line else problem.message)
        for problem in report.problems
    ]


class QuestionAdminForm(forms.ModelForm):
    """The admin's form: release and interview-only flags plus the current version's YAML."""

    source_text = forms.CharField(
        label="Question file (YAML)",
        strip=False,  # the text is hashed: a dropped final newline would be a new version
        widget=forms.Textarea(attrs={"rows": 40, "cols": 110, "spellcheck": "false", "class": "vLargeTextField"}),
        help_text="Saving validates the text and, if it changed, stores it as a new version.",
    )

    class Meta:
        model = Question
        fields = ["is_released", "interview_only"]
        help_texts = {
            "interview_only": "Kept out of practice entirely; interviews can still ask it. Ticking or "
                              "unticking this sets the `interview_only` key in the YAML below.",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        current = self.instance.current_version if self.instance.pk else None
        if current is not None:
            self.fields["source_text"].initial = current.source_text
        self.validation_report: FileReport | None = None

    def clean_source_text(self) -> str:
        # Browsers submit textareas with CRLF; the file format is LF.
        text = self.cleaned_data["source_text"].replace("\r\n", "\n")
        if "interview_only" in self.changed_data:  # model fields are cleaned before this one
            text = with_interview_only(text, bool(self.cleaned_data.get("interview_only")))
        report = validate_text(text, "<browser>")
        if report.problems:
            raise forms.ValidationError(problems_as_errors(report))
        if self.instance.pk and report.question.slug != self.instance.slug:
            raise forms.ValidationError(f"the slug must stay {self.instance.slug!r}")
        if not self.instance.pk and Question.objects.filter(slug=report.question.slug).exists():
            raise forms.ValidationError(f"a question {report.question.slug!r} exists already; edit it instead")
        self.validation_report = report
        return text


class QuestionImportForm(forms.Form):
    file = forms.FileField(label="Question file (.yaml)")
    release = forms.BooleanField(
        required=False, label="Release a new question at once (otherwise only authors see it)"
    )

    def clean_file(self) -> str:
        """The upload's text, once it decoded and validated."""
        upload = self.cleaned_data["file"]
        if upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError(f"the file is over {MAX_UPLOAD_BYTES // 1024} KB")
        try:
            text = upload.read().decode("utf-8").replace("\r\n", "\n")
        except UnicodeDecodeError:
            raise forms.ValidationError("the file is not UTF-8 text") from None
        report = validate_text(text, upload.name)
        if report.problems:
            raise forms.ValidationError(problems_as_errors(report))
        self.validation_report = report
        return text
