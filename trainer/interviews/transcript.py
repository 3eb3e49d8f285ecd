"""The review of a finished (or running) interview: one timeline, code diffs between
submissions, the editor's playback, the scores; and its Markdown and JSON exports.

The exports hold submitted scorecards only: a draft is private to its author.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import grading
from grading.models import Attempt
from questions.schema import Question
from trainer.interviews import markdown_safe as md
from trainer.interviews import selectors
from trainer.interviews.models import RATING_DIMENSIONS, Interview, InterviewEvent, Scorecard

Kind = InterviewEvent.Kind


@dataclass(frozen=True)
class Playback:
    """The recorded states of one code part's editor, oldest first; each frame is
    {"offset": seconds since the start, "at": ISO time, "kind": event kind, "source"}."""

    question_position: int
    part_id: str
    frames: list[dict]

    @property
    def element_id(self) -> str:
        return f"playback-q{self.question_position}-{self.part_id}"

    @property
    def frames_id(self) -> str:
        return f"{self.element_id}-frames"


def code_diff(before: str, after: str, *, before_name: str, after_name: str) -> list[str]:
    """Unified diff lines from `before` to `after` (empty when they are equal)."""
    return list(difflib.unified_diff(
        before.splitlines(), after.splitlines(), fromfile=before_name, tofile=after_name, lineterm=""
    ))


def _starter(entry) -> str:
    return str(
        Question.from_data(entry.question.question_version.data).part(entry.event.part_id).raw.get("starter") or ""
    )


def attach_code_diffs(entries: list[selectors.TimelineEntry]) -> None:
    """Give each code submission the diff from the part's previous submission (the
    starter code for the first one)."""
    previous: dict[tuple[int, str], tuple[str, str]] = {}
    editor_kinds = grading.kinds_with("uses_editor")
    for entry in entries:
        event = entry.event
        if event.kind != Kind.ANSWER or event.data.get("kind") not in editor_kinds:
            continue
        key = (event.question_id, event.part_id)
        before, before_name = previous.get(key) or (_starter(entry), "starter code")
        name = f"submission at {entry.offset or event.at.isoformat()}"
        entry.diff = code_diff(before, event.data.get("answer", ""), before_name=before_name, after_name=name)
        previous[key] = (event.data.get("answer", ""), name)


def playbacks(interview: Interview) -> list[Playback]:
    """Every code part's editor history, for the replay with speed control."""
    events = (
        InterviewEvent.objects.filter(interview=interview, kind__in=selectors.SOURCE_EVENT_KINDS)
        .exclude(part_id="").select_related("question").order_by("sequence")
    )
    by_part: dict[tuple[int, str], list[dict]] = {}
    editor_kinds = grading.kinds_with("uses_editor")
    for event in events:
        if event.kind == Kind.ANSWER and event.data.get("kind") not in editor_kinds:
            continue
        source = event.data.get("source", event.data.get("answer", ""))
        by_part.setdefault((event.question.position, event.part_id), []).append({
            "offset": selectors.started_offset(interview, event.at), "at": event.at.isoformat(),
            "kind": event.kind, "source": source,
        })
    return [Playback(position, part_id, frames) for (position, part_id), frames in sorted(by_part.items())]


def transcript(interview: Interview, user) -> dict:
    """Everything the transcript page shows to panel member `user`."""
    entries = selectors.timeline(interview)
    attach_code_diffs(entries)
    return {
        "interview": interview,
        "entries": entries,
        "playbacks": playbacks(interview),
        "scores": selectors.question_scores(interview),
        "scorecards": selectors.visible_scorecards(interview, user),
    }


# --- Exports ------------------------------------------------------------------------------------

def _event_json(entry: selectors.TimelineEntry) -> dict:
    event = entry.event
    row = {
        "sequence": event.sequence, "at": event.at.isoformat(), "kind": event.kind,
        "actor": event.actor.username if event.actor else None, "actor_name": entry.actor_name or None,
        "question": entry.question.position if entry.question else None,
        "part": event.part_id or None, "data": event.data,
    }
    if entry.attempt is not None:
        row["attempt"] = {"status": entry.attempt.status, "correct": entry.attempt.correct,
                          "score": entry.attempt.score, "purpose": entry.attempt.purpose}
        if entry.attempt.purpose == Attempt.Purpose.EXAMPLES:  # a run's result is its feedback, one line an example
            row["attempt"]["feedback"] = (entry.attempt.verdict or {}).get("feedback", "")
            row["attempt"]["failure_reason"] = entry.attempt.failure_reason
    if entry.diff:
        row["diff"] = entry.diff
    return row


def _scorecard_json(scorecard: Scorecard) -> dict:
    return {
        "interviewer": scorecard.interviewer.username,
        "submitted_at": scorecard.submitted_at.isoformat() if scorecard.submitted_at else None,
        "ratings": {field: getattr(scorecard, field) for field, _ in RATING_DIMENSIONS},
        "recommendation": scorecard.recommendation,
        "notes": scorecard.notes,
        "rubric_ticked": sorted(
            f"Q{tick.question.position}/{tick.part_id}/{tick.item_id}" for tick in scorecard.ticks.all()
        ),
    }


def _submitted(interview: Interview) -> list[Scorecard]:
    return list(
        interview.scorecards.filter(status=Scorecard.Status.SUBMITTED)
        .select_related("interviewer").prefetch_related("ticks__question")
    )


def export_json(interview: Interview) -> dict:
    """The whole record as data: questions (pinned versions and seeds), every event with
    snapshots included, each question's scores, and the submitted scorecards."""
    entries = selectors.timeline(interview, include_snapshots=True)
    attach_code_diffs(entries)
    return {
        "interview": {
            "id": interview.id, "title": interview.title, "created_by": interview.created_by.username,
            "candidate": interview.candidate.username if interview.candidate else None,
            "candidate_name": interview.candidate_display_name or None, "candidate_email": interview.candidate_email,
            "time_limit_minutes": interview.time_limit_minutes, "status": interview.status,
            "started_at": interview.started_at.isoformat() if interview.started_at else None,
            "deadline": interview.deadline.isoformat() if interview.deadline else None,
            "closed_at": interview.closed_at.isoformat() if interview.closed_at else None,
        },
        "questions": [
            {"position": score.question.position, "title": score.title,
             "slug": score.question.question_version.question.slug,
             "version": score.question.question_version.number, "variant_seed": score.question.variant_seed,
             "auto_score": score.auto_score,
             "parts": [{"id": part.part_id, "kind": part.kind, "answers": part.answers,
                        "score": part.attempt.score if part.attempt else None} for part in score.parts]}
            for score in selectors.question_scores(interview)
        ],
        "events": [_event_json(entry) for entry in entries],
        "scorecards": [_scorecard_json(scorecard) for scorecard in _submitted(interview)],
    }


def run_outcome(entry: selectors.TimelineEntry) -> str:
    """What a press of Run did, in words: the run of the visible examples as it stands,
    or why nothing ran."""
    data, run = entry.event.data, entry.attempt
    if run is None:
        reason = data.get("feedback", "")
        return f"not run: {reason}" if data.get("valid") else f"not run, the code does not read: {reason}"
    if not run.is_finished:
        return f"running the visible examples ({run.get_status_display().lower()})"
    if run.status == Attempt.Status.FAILED:
        return f"the run failed: {run.failure_reason}"
    return "ran the visible examples"


def _add_text(lines: list[str], text, separator: str = ": ") -> None:
    """Typed prose (a note, a grader's feedback): on the entry's own line when it is one
    line, else as a text block under it (markdown_safe says why either is safe)."""
    if md.is_one_line(text):
        lines[0] += separator + md.text(text)
    else:
        lines += md.fence(text, "text")


def _event_markdown(entry: selectors.TimelineEntry) -> list[str]:
    """One timeline entry as a list item. Everything typed or produced from typed input
    (answers, code, output, notes, feedback, names) goes through markdown_safe."""
    event, data = entry.event, entry.event.data
    where = ""
    if entry.question:
        where = f" Q{entry.question.position}" + (f"/{md.text(event.part_id)}" if event.part_id else "")
    head = f"- `{entry.offset or event.at.strftime('%H:%M:%S')}` **{event.get_kind_display()}**{where}"
    if event.actor:
        head += f" ({md.text(entry.actor_name)})"
    lines = [head]
    if event.kind in (Kind.ANSWER, Kind.ANSWER_INVALID):
        answer = data.get("answer", "")
        if md.is_one_line(answer):
            lines[0] += f": {md.code(answer)}"
        else:
            lines += md.fence(answer)
        if event.kind == Kind.ANSWER_INVALID:
            lines.append(f"  - unreadable, no attempt used: {md.text(data.get('feedback', ''))}")
            if data.get("cut"):
                lines.append(f"  - only its first {len(answer):,} of {data.get('answer_chars', 0):,} "
                             "characters were kept")
        elif entry.attempt is not None:
            verdict = {True: "correct", False: "wrong", None: "recorded"}[entry.attempt.correct]
            lines.append(f"  - {entry.attempt.status}: {verdict}, score {entry.attempt.score}")
    elif event.kind == Kind.VERDICT:
        lines[0] += f": score {data.get('score')}"
        if data.get("feedback"):
            _add_text(lines, data["feedback"], separator=". ")
    elif event.kind == Kind.HINT:
        lines[0] += f": hint {data.get('index', 0) + 1}"
    elif event.kind == Kind.NOTE:
        _add_text(lines, data.get("text", ""))
    elif event.kind == Kind.CODE_RUN:
        _add_text(lines, run_outcome(entry))
        lines += md.fence(data.get("source", ""), "python")
        output = (entry.attempt.verdict or {}).get("feedback", "") if entry.attempt else ""
        if output:
            lines += md.fence(output, "text")
    elif event.kind == Kind.CLOSED:
        _add_text(lines, data.get("reason", ""))
    if entry.diff:
        lines += md.fence("\n".join(entry.diff), "diff")
    return lines


def export_markdown(interview: Interview) -> str:
    """The transcript and the submitted scorecards as a Markdown document. The only
    structure in it is ours: typed text cannot add a heading or end a fence."""
    entries = selectors.timeline(interview)
    attach_code_diffs(entries)
    lines = [
        f"# {md.text(interview.title)}", "",
        f"- Candidate: {md.text(interview.candidate_label) if interview.candidate_id else 'not joined'}",
        f"- Interviewer: {md.text(interview.created_by.username)}",
        f"- Time limit: {interview.time_limit_minutes} min; status: {interview.get_status_display()}",
        "", "## Questions", "",
    ]
    for score in selectors.question_scores(interview):
        auto = "no auto-graded parts" if score.auto_score is None else f"auto-graded score {score.auto_score:.2f}"
        title = md.text(score.title)
        lines.append(f"{score.question.position}. {title} (variant {score.question.variant_seed}): {auto}")
    lines += ["", "## Timeline", ""]
    for entry in entries:
        lines += _event_markdown(entry)
    lines += ["", "## Scorecards", ""]
    scorecards = _submitted(interview)
    if not scorecards:
        lines.append("No scorecard submitted yet.")
    for scorecard in scorecards:
        lines += [f"### {md.text(scorecard.interviewer.username)}: {scorecard.get_recommendation_display()}", ""]
        lines += [f"- {label}: {value}/4" for _, label, value in scorecard.ratings()]
        ticks = _scorecard_json(scorecard)["rubric_ticked"]
        lines.append(f"- Rubric items covered: {md.text(', '.join(ticks)) if ticks else 'none'}")
        if scorecard.notes:
            lines += md.fence(scorecard.notes, "text", indent="")
        lines.append("")
    return "\n".join(lines) + "\n"
