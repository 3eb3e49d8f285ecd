"""Everything that changes scorecards: open one pre-filled from the evidence, save the
author's per-part judgements and recommendation as a draft, submit it.

A scorecard is private to its author until submitted, then final. Each part is judged
by confirming its auto score, overriding it (a score in 0..1 and a reason), or, for
parts a person assesses, ticking the rubric items the answer covered; submitting needs
every part judged, a recommendation, and the interview closed.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from trainer.interviews import selectors
from trainer.interviews.evidence import PartEvidence, judged_parts, part_evidence
from trainer.interviews.models import Interview, PartJudgement, Recommendation, Scorecard
from trainer.interviews.services import InterviewRefused

MAX_REASON_CHARS = 5_000


@dataclass(frozen=True)
class JudgementInput:
    """What the author says about one part."""

    confirmed: bool = False
    override_score: float | None = None
    reason: str = ""
    rubric_ticked: tuple[str, ...] = ()


def _prefill(scorecard: Scorecard, evidence: list[PartEvidence]) -> None:
    """Create the judgements a draft lacks (auto score filled, not confirmed), and bring
    the auto score of those not judged yet up to date (a verdict can land after the
    scorecard was first opened). Two queries when nothing changed."""
    existing = {(judgement.question_id, judgement.part_id): judgement for judgement in scorecard.judgements.all()}
    missing = [
        PartJudgement(scorecard=scorecard, question=item.question, part_id=item.part_id, auto_score=item.auto_score)
        for item in evidence if item.key not in existing
    ]
    if missing:
        PartJudgement.objects.bulk_create(missing, ignore_conflicts=True)  # a second tab may have made them
    stale = []
    for item in evidence:
        judgement = existing.get(item.key)
        if judgement is not None and not (judgement.confirmed or judgement.is_overridden) \
                and judgement.auto_score != item.auto_score:
            judgement.auto_score = item.auto_score
            stale.append(judgement)
    if stale:
        PartJudgement.objects.bulk_update(stale, ["auto_score"])


def scorecard_open(*, interview: Interview, interviewer, evidence: list[PartEvidence] | None = None) -> Scorecard:
    """`interviewer`'s own scorecard of `interview`, made on first opening; a draft is
    pre-filled with one judgement per part from `evidence` (read when not given)."""
    if not selectors.is_on_panel(interviewer, interview):
        raise InterviewRefused("only the panel can score this interview")
    scorecard, _ = Scorecard.objects.get_or_create(interview=interview, interviewer=interviewer)
    if not scorecard.is_submitted:
        _prefill(scorecard, part_evidence(interview) if evidence is None else evidence)
    return scorecard


def check_judgement(item: PartEvidence, given: JudgementInput) -> None:
    """Refuse a judgement that cannot stand: an override outside 0..1 or without a
    reason, rubric items the part does not have."""
    if given.override_score is not None:
        if not 0.0 <= given.override_score <= 1.0:
            raise InterviewRefused(f"{item.label}: an override is a score from 0 to 1")
        if not given.reason.strip():
            raise InterviewRefused(f"{item.label}: say why you override the auto score")
    if len(given.reason) > MAX_REASON_CHARS:
        raise InterviewRefused(f"{item.label}: a reason is at most {MAX_REASON_CHARS} characters")
    known = {rubric_item.id for rubric_item in item.rubric}
    unknown = sorted(set(given.rubric_ticked) - known)
    if unknown:
        raise InterviewRefused(f"{item.label}: unknown rubric items: {', '.join(unknown)}")


def _locked_draft(scorecard: Scorecard) -> Scorecard:
    locked = Scorecard.objects.select_for_update().select_related("interview").get(id=scorecard.id)
    if locked.is_submitted:
        raise InterviewRefused("this scorecard was already submitted")
    return locked


@transaction.atomic
def scorecard_save(*, scorecard: Scorecard, judgements: dict[tuple[int, str], JudgementInput], recommendation: str,
                   notes: str) -> Scorecard:
    """Save the draft: the judgement of each part named in `judgements` (keyed by
    (interview question id, part id)), the recommendation ("" for none yet) and notes.
    Any refused judgement refuses the whole save."""
    locked = _locked_draft(scorecard)
    if recommendation and recommendation not in Recommendation.values:
        raise InterviewRefused("pick a recommendation from the list")
    evidence = {item.key: item for item in part_evidence(locked.interview)}
    unknown = sorted(set(judgements) - set(evidence))
    if unknown:
        raise InterviewRefused(f"this interview has no parts {unknown}")
    for key, given in judgements.items():
        check_judgement(evidence[key], given)
    _prefill(locked, list(evidence.values()))
    rows = {(row.question_id, row.part_id): row for row in locked.judgements.all()}
    for key, given in judgements.items():
        row = rows[key]
        row.override_score = given.override_score
        row.confirmed = given.confirmed and given.override_score is None  # an override replaces the auto score
        row.reason = given.reason.strip()
        row.rubric_ticked = sorted(set(given.rubric_ticked))
    PartJudgement.objects.bulk_update(
        [rows[key] for key in judgements], ["override_score", "confirmed", "reason", "rubric_ticked"]
    )
    locked.recommendation, locked.notes, locked.updated_at = recommendation, notes, timezone.now()
    locked.save(update_fields=["recommendation", "notes", "updated_at"])
    return locked


def missing_judgements(scorecard: Scorecard, evidence: list[PartEvidence]) -> list[str]:
    """The labels ("Q1/floor") of the parts `scorecard` has not judged yet."""
    return [part.evidence.label for part in judged_parts(evidence, scorecard.judgements.all()) if not part.is_judged]


@transaction.atomic
def scorecard_submit(*, scorecard: Scorecard) -> Scorecard:
    """Submit the saved draft: final from now on, and readable by the rest of the panel.
    Refused, with what is missing, until the interview has ended, every part is judged
    and a recommendation is picked; the draft stays as it was."""
    locked = _locked_draft(scorecard)
    if not locked.interview.is_closed:
        raise InterviewRefused("a scorecard can be submitted once the interview has ended")
    missing = missing_judgements(locked, part_evidence(locked.interview))
    if missing:
        raise InterviewRefused(
            f"judge every part before submitting; not judged yet: {', '.join(missing)} (confirm the auto score, "
            "override it with a reason, or tick the rubric items covered)"
        )
    if not locked.recommendation:
        raise InterviewRefused("pick an overall recommendation before submitting")
    locked.status, locked.submitted_at = Scorecard.Status.SUBMITTED, timezone.now()
    locked.save(update_fields=["status", "submitted_at"])
    return locked
