"""Everything that changes the question bank's rows.

`sync_bank()` loads the bank files (what `manage.py sync_questions` runs);
`question_save_text()` stores one question's YAML from any origin (a bank file, the
admin's textarea, an uploaded file). Both validate first and store nothing invalid.

The files are the source of truth, but a browser edit is not silently undone: a bank
file creates a new version only when its text differs from the last version loaded
from a file. So re-running the sync is a no-op, an edited file supersedes whatever is
current, and a browser edit stays current until its file changes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from questions.loader import Problem, bank_files, content_hash, display_path
from questions.models import Question, QuestionVersion
from questions.validation import FileReport, validate_paths, validate_text


@dataclass
class SaveResult:
    """What storing one question's text did: `version` is None when nothing was stored
    (`problems` says why, or the text was already current)."""

    problems: list[Problem] = field(default_factory=list)
    question: Question | None = None
    version: QuestionVersion | None = None
    created_version: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class SyncResult:
    created: list[str] = field(default_factory=list)  # slugs of new questions
    updated: list[str] = field(default_factory=list)  # slugs given a new version
    unchanged: list[str] = field(default_factory=list)
    failed: dict[str, list[Problem]] = field(default_factory=dict)  # file path -> problems
    missing: list[str] = field(default_factory=list)  # stored slugs with no valid bank file (whole-bank sync)

    @property
    def ok(self) -> bool:
        return not self.failed


def question_save_text(
    text: str,
    *,
    origin: str,
    user=None,
    source_path: str = "",
    expected_slug: str | None = None,
    release_new: bool = True,
    report: FileReport | None = None,
) -> SaveResult:
    """Validate `text` and store it as the question's newest, current version.

    `expected_slug` pins the question being edited (the admin's textarea may not turn one
    question into another). A new question is created released or not per
    `release_new`. Text identical to the current version stores nothing. `report` is a
    validation already run on exactly this text (the bank sync validates files together).
    """
    report = report or validate_text(text, source_path or "<browser>")
    if report.problems:
        return SaveResult(problems=list(report.problems))
    parsed = report.question
    if expected_slug is not None and parsed.slug != expected_slug:
        problem = Problem(report.path, report.lines.line_of(("slug",)), f"the slug must stay {expected_slug!r}")
        return SaveResult(problems=[problem])
    with transaction.atomic():
        question, _ = Question.objects.select_for_update().get_or_create(
            slug=parsed.slug,
            defaults=_listing_fields(parsed) | {"is_released": release_new},
        )
        current = question.current_version
        if current is not None and current.content_hash == content_hash(text):
            return SaveResult(question=question, version=current)
        version = _create_version(question, text, report.question.raw, origin, user, source_path)
        for name, value in _listing_fields(parsed).items():
            setattr(question, name, value)
        question.current_version = version
        question.updated_at = timezone.now()
        question.save(update_fields=[*_listing_fields(parsed), "current_version", "updated_at"])
    return SaveResult(question=question, version=version, created_version=True)


def _listing_fields(parsed) -> dict:
    return {
        "topic": parsed.topic.value,
        "difficulty": parsed.difficulty,
        "seed_number": parsed.seed,
        "title": parsed.title,
        "summary": parsed.summary,
        "part_kinds": [[part.id, part.kind] for part in parsed.parts],
        "interview_only": parsed.interview_only,
    }


def _create_version(question: Question, text: str, data: dict, origin: str, user, source_path: str) -> QuestionVersion:
    latest = question.versions.aggregate(latest=Max("number"))["latest"] or 0
    return QuestionVersion.objects.create(
        question=question,
        number=latest + 1,
        content_hash=content_hash(text),
        source_text=text,
        data_json=json.dumps(data),
        origin=origin,
        source_path=source_path,
        created_by=user if user is not None and user.is_authenticated else None,
    )


def sync_bank(paths: list[Path] | None = None) -> SyncResult:
    """Load bank files into the database; safe to run any number of times.

    A file whose text is the one its question's latest file version was stored from is
    unchanged and not validated again. Every other file is validated first (slugs must be
    unique across the files) for what storing it needs, leaving the authoring checks
    (example solutions in the sandbox, near misses, seed draws: `validate_text`'s
    `thorough`) to `validate_questions` and CI, since they take minutes and a start must
    not; a file with problems is reported in `failed` and stores nothing, the others are
    still loaded.
    """
    whole_bank = paths is None
    paths = bank_files() if whole_bank else [Path(path) for path in paths]
    result = SyncResult()
    texts = {path: path.read_text(encoding="utf-8") for path in paths}
    stored = _stored_file_slugs({content_hash(text) for text in texts.values()})
    changed = [path for path in paths if content_hash(texts[path]) not in stored]
    seen_slugs = set()
    for path in paths:
        slug = stored.get(content_hash(texts[path]))
        if slug is not None:
            seen_slugs.add(slug)
            result.unchanged.append(slug)
    reports = validate_paths(changed, thorough=False)
    _check_slugs_against_unchanged(reports, seen_slugs)
    for path, report in zip(changed, reports):
        if report.problems:
            result.failed[report.path] = list(report.problems)
            continue
        slug = report.question.slug
        seen_slugs.add(slug)
        text = texts[path]
        existed = Question.objects.filter(slug=slug).exists()
        saved = question_save_text(
            text, origin=QuestionVersion.Origin.FILE, source_path=display_path(path), report=report
        )
        if saved.problems:  # only a race with another writer gets here
            result.failed[report.path] = saved.problems
        elif not existed:
            result.created.append(slug)
        elif saved.created_version:
            result.updated.append(slug)
        else:
            result.unchanged.append(slug)
    if whole_bank:
        result.missing = list(Question.objects.exclude(slug__in=seen_slugs).values_list("slug", flat=True))
    return result


def _stored_file_slugs(hashes: set[str]) -> dict[str, str]:
    """{content hash: slug} for each hash that is its question's latest version stored
    from a file: those files are unchanged since the last sync (two queries)."""
    rows = list(QuestionVersion.objects.filter(origin=QuestionVersion.Origin.FILE, content_hash__in=hashes)
                .values_list("question_id", "number", "content_hash", "question__slug"))
    latest = dict(QuestionVersion.objects.filter(origin=QuestionVersion.Origin.FILE,
                                                 question_id__in={row[0] for row in rows})
                  .values("question_id").annotate(last=Max("number")).values_list("question_id", "last"))
    return {digest: slug for question_id, number, digest, slug in rows if latest.get(question_id) == number}


def _check_slugs_against_unchanged(reports: list[FileReport], unchanged_slugs: set[str]) -> None:
    """A changed file may not take the slug of an unchanged one (validation checks slugs
    only among the files it reads)."""
    for report in reports:
        if report.question is not None and report.question.slug in unchanged_slugs:
            report.problems.append(Problem(report.path, 1, f"slug {report.question.slug!r} is already used by "
                                                           "another bank file"))
