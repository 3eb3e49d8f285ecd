"""What an interview measured, part by part: the evidence a scorecard opens with and the
exports carry beside each interviewer's judgement.

`part_evidence(interview)` reads the record in three queries whatever its length (the
questions, the events without editor snapshots, the attempts they name). The kind of
each part is asked what it can do (`auto_graded`, `self_assessed`); no kind is named.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import grading
from grading.kinds.base import SpecError
from grading.models import Attempt
from grading.verdict import SpeedCheckStatus, Verdict
from questions.schema import Question
from trainer.interviews.models import Interview, InterviewEvent, InterviewQuestion, PartJudgement

Kind = InterviewEvent.Kind
# How `PartEvidence.time_on_part` is measured, in the words the pages and exports use.
TIME_ON_PART_RULE = (
    "from the first time the candidate opened the question (or, if that was not recorded, the part's first "
    "recorded event) to the submission of the final answer"
)


def clock(delta: timedelta | None) -> str:
    """A duration as "m:ss" ("" when unknown)."""
    if delta is None:
        return ""
    seconds = max(0, int(delta.total_seconds()))
    return f"{seconds // 60}:{seconds % 60:02d}"


def offset_from(started_at: datetime | None, at: datetime) -> str:
    """Time since the interview started ("+12:05"), or "" before it started."""
    if started_at is None or at < started_at:
        return ""
    seconds = int((at - started_at).total_seconds())
    return f"+{seconds // 60:02d}:{seconds % 60:02d}"


@dataclass(frozen=True)
class RunEvidence:
    """One press of Run on a code part: the source, and the run of the visible examples
    (its attempt as it stands now), or why nothing ran (`refusal`)."""

    sequence: int
    at: datetime
    offset: str
    source: str
    attempt: Attempt | None
    refusal: str = ""
    unreadable: bool = False

    @property
    def verdict(self) -> Verdict | None:
        return self.attempt.stored_verdict if self.attempt else None

    @property
    def outcome(self) -> str:
        run = self.attempt
        if run is None:
            return f"not run, the code does not read: {self.refusal}" if self.unreadable else f"not run: {self.refusal}"
        if not run.is_finished:
            return f"running the visible examples ({run.get_status_display().lower()})"
        if run.status == Attempt.Status.FAILED:
            return f"the run failed: {run.failure_reason}"
        verdict = self.verdict
        if verdict is not None and verdict.examples:
            passed = sum(example.passed for example in verdict.examples)
            return f"ran the visible examples: {passed} of {len(verdict.examples)} passed"
        return "ran the visible examples"

    @property
    def output(self) -> str:
        """The run's result as lines: one per example, or the run's feedback."""
        verdict = self.verdict
        if verdict is None:
            return ""
        if not verdict.examples:
            return verdict.feedback
        lines = []
        for example in verdict.examples:
            line = f"{example.outcome.replace('_', ' ')}: {example.name}"
            if not example.passed:
                line += "".join(f"; {label} {value}" for label, value in
                                (("got", example.got), ("expected", example.expected), ("detail", example.detail))
                                if value)
            lines.append(line)
        return "\n".join(lines)


@dataclass(frozen=True)
class PartEvidence:
    """One part of one interview question as the record measured it.

    `final_attempt` is the latest graded answer (the latest answer if none is graded
    yet); `time_on_part` follows TIME_ON_PART_RULE (None without a final answer);
    `rubric` holds the kind's rubric items for parts a person assesses."""

    question: InterviewQuestion
    question_title: str
    part_id: str
    kind: str
    points: float
    final_attempt: Attempt | None
    hints_used: int
    time_on_part: timedelta | None
    submissions: int
    unreadable: int
    runs: tuple[RunEvidence, ...]
    rubric: tuple = ()  # grading.kinds.explain.RubricItem (id, text) of self-assessed kinds

    @property
    def key(self) -> tuple[int, str]:
        return (self.question.id, self.part_id)

    @property
    def label(self) -> str:
        return f"Q{self.question.position}/{self.part_id}"

    @property
    def engine(self):
        """The part's answer kind (what it can do)."""
        return grading.get_kind(self.kind)

    @property
    def verdict(self) -> Verdict | None:
        return self.final_attempt.stored_verdict if self.final_attempt else None

    @property
    def auto_score(self) -> float | None:
        """The final graded answer's score, for auto-graded kinds; None otherwise."""
        attempt = self.final_attempt
        if attempt is None or attempt.status != Attempt.Status.GRADED or not self.engine.auto_graded:
            return None
        return attempt.score

    @property
    def correct(self) -> bool | None:
        return self.final_attempt.correct if self.final_attempt else None

    @property
    def time_on_part_text(self) -> str:
        return clock(self.time_on_part)

    @property
    def summary(self) -> str:
        """The final answer's verdict in words."""
        attempt = self.final_attempt
        if attempt is None:
            return "no answer"
        if not attempt.is_finished:
            return f"grading ({attempt.get_status_display().lower()})"
        if attempt.status == Attempt.Status.FAILED:
            return f"grading failed: {attempt.failure_reason}"
        if attempt.correct is None or self.engine.self_assessed:
            return "recorded; the interviewer assesses it against the rubric"
        word = "correct" if attempt.correct else "wrong"
        return f"{word}, score {attempt.score or 0.0:.2f}"

    @property
    def speed(self) -> str:
        """What the verdict says about speed (kinds that time the answer); "" otherwise."""
        verdict = self.verdict
        check = verdict.speed if verdict else None
        if check is None:
            return ""
        if check.status == SpeedCheckStatus.NOT_MEASURED:
            return f"speed not measured here ({check.reason}); it is not part of this score"
        if check.status == SpeedCheckStatus.SKIPPED:
            return f"speed not timed ({check.share:.0%} of the part, not earned): {check.reason}"
        return f"speed {'passed' if check.passed else 'not passed'} ({check.share:.0%} of the part): {check.reason}"


@dataclass(frozen=True)
class JudgedPart:
    """A part's evidence beside one scorecard's judgement of it (None: not made yet)."""

    evidence: PartEvidence
    judgement: PartJudgement | None

    @property
    def ticked(self) -> tuple[str, ...]:
        return self.judgement.ticked if self.judgement else ()

    @property
    def rubric_share(self) -> float | None:
        """The share of the rubric ticked; None for parts without a rubric."""
        if not self.evidence.rubric:
            return None
        known = {item.id for item in self.evidence.rubric}
        return len(known & set(self.ticked)) / len(known)

    @property
    def is_judged(self) -> bool:
        """Confirmed, overridden, or (rubric parts) some item ticked."""
        judgement = self.judgement
        return judgement is not None and (judgement.confirmed or judgement.is_overridden or bool(self.ticked))

    @property
    def state(self) -> str:
        if not self.is_judged:
            return "not judged"
        if self.judgement.is_overridden:
            return "overridden"
        return "ticked" if self.evidence.rubric else "confirmed"

    @property
    def score(self) -> float | None:
        """The score the interviewer gives: the override, else the rubric's ticked share,
        else the confirmed auto score (0 when no answer was graded); None until judged."""
        if not self.is_judged:
            return None
        if self.judgement.is_overridden:
            return self.judgement.override_score
        if self.evidence.rubric:
            return self.rubric_share
        return self.judgement.auto_score or 0.0


def _rubric(part) -> tuple:
    engine = grading.get_kind(part.kind)
    if not engine.self_assessed:
        return ()
    try:
        return tuple(engine.load_spec(part.raw).rubric)
    except SpecError:  # stored versions were validated; a broken one shows no rubric rather than failing
        return ()


def part_evidence(interview: Interview) -> list[PartEvidence]:
    """Every part of every question of `interview`, in order, with what the record holds
    about it (see PartEvidence). Parts of a kind no longer registered are left out: no
    kind can say what they measured. Three queries."""
    questions = list(interview.questions.select_related("question_version").order_by("position"))
    events = list(
        InterviewEvent.objects.filter(interview=interview).exclude(kind=Kind.CODE_SNAPSHOT).order_by("sequence")
    )
    attempt_ids = [event.data.get("attempt_id") for event in events
                   if event.kind in (Kind.ANSWER, Kind.CODE_RUN) and event.data.get("attempt_id")]
    attempts = Attempt.objects.in_bulk(attempt_ids)
    registered = set(grading.kinds())
    evidence = []
    for iq in questions:
        schema = Question.from_data(iq.question_version.data)
        mine = [event for event in events if event.question_id == iq.id]
        opened = next((event.at for event in mine if event.kind == Kind.QUESTION_OPENED), None)
        hints = sum(event.kind == Kind.HINT for event in mine)
        for part in schema.parts:
            if part.kind not in registered:
                continue
            evidence.append(_one_part(interview, iq, schema.title, part, mine, attempts, opened, hints))
    return evidence


def _one_part(interview, iq, title, part, events, attempts, opened, hints) -> PartEvidence:
    own = [event for event in events if event.part_id == part.id]
    answers = [(event, attempts.get(event.data.get("attempt_id"))) for event in own if event.kind == Kind.ANSWER]
    answers = [(event, attempt) for event, attempt in answers if attempt is not None]
    graded = [pair for pair in answers if pair[1].status == Attempt.Status.GRADED]
    final_event, final = (graded or answers)[-1] if answers else (None, None)
    start = opened or (own[0].at if own else None)
    time_on_part = None
    if final_event is not None and start is not None:
        time_on_part = max(timedelta(0), final_event.at - start)
    runs = tuple(
        RunEvidence(event.sequence, event.at, offset_from(interview.started_at, event.at),
                    event.data.get("source", ""), attempts.get(event.data.get("attempt_id")),
                    event.data.get("feedback", ""), not event.data.get("valid", True))
        for event in own if event.kind == Kind.CODE_RUN
    )
    return PartEvidence(
        question=iq, question_title=title, part_id=part.id, kind=part.kind,
        points=float(part.raw.get("points", 1)), final_attempt=final, hints_used=hints, time_on_part=time_on_part,
        submissions=len(answers), unreadable=sum(event.kind == Kind.ANSWER_INVALID for event in own),
        runs=runs, rubric=_rubric(part),
    )


def judged_parts(evidence: list[PartEvidence], judgements) -> list[JudgedPart]:
    """Pair each part's evidence with the scorecard's judgement of it (from `judgements`,
    any iterable of PartJudgement of one scorecard)."""
    by_key = {(judgement.question_id, judgement.part_id): judgement for judgement in judgements}
    return [JudgedPart(item, by_key.get(item.key)) for item in evidence]
