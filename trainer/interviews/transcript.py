"""The review of a finished (or running) interview: one timeline, code diffs between
submissions, the editor's playback with the runs and verdicts of the code as they stood
at each frame, the evidence and the scorecards; and its Markdown and JSON exports.

The exports hold the evidence of every part and the submitted scorecards, each with its
judgement of every part: a draft is private to its author.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from datetime import datetime

import grading
from grading.models import Attempt
from questions.schema import Question
from trainer.interviews import markdown_safe as md
from trainer.interviews import selectors
from trainer.interviews.evidence import TIME_ON_PART_RULE, JudgedPart, PartEvidence, judged_parts, part_evidence
from trainer.interviews.models import RATING_DIMENSIONS, Interview, InterviewEvent, Scorecard

Kind = InterviewEvent.Kind


@dataclass(frozen=True)
class Playback:
    """The recorded states of one code part's editor, oldest first, and the runs and
    submissions of its code (`results`, timeline entries in order).

    Each frame is {"offset": seconds since the start, "at": ISO time, "kind": event
    kind, "sequence", "source", "run" and "submission": the index in `results` of the
    latest run and submission recorded by then (None before the first), and
    "run_pending" / "submission_pending": whether that one's result had not come back
    yet at the frame's time}. So the page shows, at each frame, what the candidate saw.
    """

    question_position: int
    part_id: str
    frames: list[dict]
    results: list[selectors.TimelineEntry] = field(default_factory=list)

    @property
    def element_id(self) -> str:
        return f"playback-q{self.question_position}-{self.part_id}"

    @property
    def frames_id(self) -> str:
        return f"{self.element_id}-frames"


@dataclass(frozen=True)
class TranscriptRow:
    """A timeline entry on the transcript page, with the playback frame it is (if any)."""

    entry: selectors.TimelineEntry
    playback_id: str = ""
    frame: int | None = None


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


def _result_arrived_at(entry: selectors.TimelineEntry) -> datetime | None:
    """When the candidate saw the result of a run or submission: its grading's end;
    at once when nothing ran; None while it is still queued or running."""
    attempt = entry.attempt
    if attempt is None:
        return entry.event.at
    if not attempt.is_finished:
        return None
    return attempt.graded_at or entry.event.at


def _is_editor_event(entry: selectors.TimelineEntry, editor_kinds) -> bool:
    event = entry.event
    if event.kind not in selectors.SOURCE_EVENT_KINDS or not event.part_id or entry.question is None:
        return False
    return event.kind != Kind.ANSWER or event.data.get("kind") in editor_kinds


def playbacks(interview: Interview, entries: list[selectors.TimelineEntry] | None = None) -> list[Playback]:
    """Every code part's editor history, for the replay with speed control, with the
    runs and submissions in line. `entries`: the timeline with snapshots, if read."""
    if entries is None:
        entries = selectors.timeline(interview, include_snapshots=True)
    editor_kinds = grading.kinds_with("uses_editor")
    by_part: dict[tuple[int, str], Playback] = {}
    for entry in entries:
        if not _is_editor_event(entry, editor_kinds):
            continue
        event = entry.event
        key = (entry.question.position, event.part_id)
        playback = by_part.setdefault(key, Playback(*key, frames=[]))
        if event.kind in (Kind.CODE_RUN, Kind.ANSWER):
            playback.results.append(entry)
        playback.frames.append({
            "offset": selectors.started_offset(interview, event.at), "at": event.at.isoformat(),
            "kind": event.kind, "sequence": event.sequence,
            "source": event.data.get("source", event.data.get("answer", "")),
            **_current_results(playback.results, event.at),
        })
    return [by_part[key] for key in sorted(by_part)]


def _current_results(results: list[selectors.TimelineEntry], at: datetime) -> dict:
    current = {}
    for name, kind in (("run", Kind.CODE_RUN), ("submission", Kind.ANSWER)):
        index = next((i for i in range(len(results) - 1, -1, -1) if results[i].event.kind == kind), None)
        arrived = _result_arrived_at(results[index]) if index is not None else None
        current[name] = index
        current[f"{name}_pending"] = index is not None and (arrived is None or arrived > at)
    return current


def _rows(entries: list[selectors.TimelineEntry], playback_list: list[Playback]) -> list[TranscriptRow]:
    frame_of = {frame["sequence"]: (playback.element_id, index)
                for playback in playback_list for index, frame in enumerate(playback.frames)}
    return [TranscriptRow(entry, *frame_of.get(entry.event.sequence, ("", None))) for entry in entries]


def transcript(interview: Interview, user) -> dict:
    """Everything the transcript page shows to panel member `user`: the timeline with
    the editor snapshots in line, each code part's playback, the evidence of every part,
    the data of its lab questions as the candidate saw it, and the scorecards `user` may
    read with their judgements."""
    entries = selectors.timeline(interview, include_snapshots=True)
    attach_code_diffs(entries)
    playback_list = playbacks(interview, entries)
    evidence = part_evidence(interview)
    return {
        "interview": interview,
        "rows": _rows(entries, playback_list),
        "playbacks": playback_list,
        "scores": selectors.question_scores(interview),
        "lab_questions": selectors.lab_questions(interview),
        "evidence": evidence,
        "time_rule": TIME_ON_PART_RULE,
        "scorecards": [(card, judged_parts(evidence, card.judgements.all()))
                       for card in selectors.visible_scorecards(interview, user)],
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
        verdict = entry.attempt.stored_verdict
        row["attempt"] = {"status": entry.attempt.status, "correct": entry.attempt.correct,
                          "score": entry.attempt.score, "purpose": entry.attempt.purpose,
                          "outcome": verdict.outcome.value if verdict else None}
        if verdict is not None and verdict.cases:  # every test a code or kernel answer ran
            row["attempt"]["cases"] = [asdict(case) for case in verdict.cases]
        if entry.attempt.purpose == Attempt.Purpose.EXAMPLES:  # a run's result is its feedback, one line an example
            row["attempt"]["feedback"] = verdict.feedback if verdict else ""
            row["attempt"]["failure_reason"] = entry.attempt.failure_reason
    if entry.diff:
        row["diff"] = entry.diff
    return row


def _run_json(run) -> dict:
    verdict = run.verdict
    return {
        "sequence": run.sequence, "at": run.at.isoformat(), "offset": run.offset, "outcome": run.outcome,
        "source": run.source, "status": run.attempt.status if run.attempt else None,
        "feedback": verdict.feedback if verdict else run.refusal,
        "examples": [{"name": example.name, "outcome": example.outcome, "got": example.got,
                      "expected": example.expected, "detail": example.detail}
                     for example in (verdict.examples if verdict else ())],
    }


def _evidence_json(item: PartEvidence) -> dict:
    attempt = item.final_attempt
    return {
        "question": item.question.position, "part": item.part_id, "kind": item.kind, "points": item.points,
        "auto_graded": item.engine.auto_graded, "self_assessed": item.engine.self_assessed,
        "final_answer": None if attempt is None else {
            "attempt_id": attempt.id, "status": attempt.status, "correct": attempt.correct, "score": attempt.score,
            "answer": attempt.answer,
        },
        "auto_score": item.auto_score, "summary": item.summary, "speed": item.speed or None,
        "hints_used": item.hints_used, "submissions": item.submissions, "unreadable": item.unreadable,
        "time_on_part_seconds": item.time_on_part.total_seconds() if item.time_on_part is not None else None,
        "runs": [_run_json(run) for run in item.runs],
        "rubric": [{"id": rubric_item.id, "text": rubric_item.text} for rubric_item in item.rubric],
    }


def _judgement_json(part: JudgedPart) -> dict:
    judgement = part.judgement
    return {
        "question": part.evidence.question.position, "part": part.evidence.part_id, "state": part.state,
        "auto_score": judgement.auto_score if judgement else None,
        "confirmed": bool(judgement and judgement.confirmed),
        "override_score": judgement.override_score if judgement else None,
        "reason": judgement.reason if judgement else "",
        "rubric_ticked": list(part.ticked), "score": part.score,
    }


def _scorecard_json(scorecard: Scorecard, evidence: list[PartEvidence]) -> dict:
    judged = judged_parts(evidence, scorecard.judgements.all())
    return {
        "interviewer": scorecard.interviewer.username,
        "submitted_at": scorecard.submitted_at.isoformat() if scorecard.submitted_at else None,
        "recommendation": scorecard.recommendation,
        "notes": scorecard.notes,
        "judgements": [_judgement_json(part) for part in judged],
        "rubric_ticked": sorted(f"{part.evidence.label}/{item}" for part in judged for item in part.ticked),
        # The 1-4 ratings of scorecards made before per-part judgements (null since).
        "ratings": {field: getattr(scorecard, field) for field, _ in RATING_DIMENSIONS},
    }


def _submitted(interview: Interview) -> list[Scorecard]:
    return list(
        interview.scorecards.filter(status=Scorecard.Status.SUBMITTED)
        .select_related("interviewer").prefetch_related("judgements")
    )


def export_json(interview: Interview) -> dict:
    """The whole record as data: questions (pinned versions and seeds), every event with
    snapshots included, each question's scores, each part's evidence, and the submitted
    scorecards with their judgement of every part."""
    entries = selectors.timeline(interview, include_snapshots=True)
    attach_code_diffs(entries)
    evidence = part_evidence(interview)
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
        "evidence": [_evidence_json(item) for item in evidence],
        "time_on_part": TIME_ON_PART_RULE,
        "events": [_event_json(entry) for entry in entries],
        "scorecards": [_scorecard_json(scorecard, evidence) for scorecard in _submitted(interview)],
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
        if data.get("scratchpad"):
            lines.append("  - the candidate's working (scratchpad):")
            lines += md.fence(data["scratchpad"], "text", indent="    ")
        if data.get("auto_submitted"):
            when = "at time-out" if data.get("reason") == "expired" else "when the interviewer ended the interview"
            lines.append(f"  - submitted for the candidate {when}: the code left in the editor")
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
        verdict = entry.attempt.stored_verdict if entry.attempt else None
        output = verdict.feedback if verdict else ""
        if output:
            lines += md.fence(output, "text")
    elif event.kind == Kind.CLOSED:
        _add_text(lines, data.get("reason", ""))
    if entry.diff:
        lines += md.fence("\n".join(entry.diff), "diff")
    return lines


def _score(value: float | None) -> str:
    return "none" if value is None else f"{value:.2f}"


def _evidence_markdown(item: PartEvidence) -> list[str]:
    """One part's evidence as a list item; typed text (answers, output) is fenced."""
    head = f"- {md.text(item.label)} ({md.text(item.kind)}, {item.points:g} pt): {md.text(item.summary)}"
    lines = [head + (f"; auto score {item.auto_score:.2f}" if item.auto_score is not None else "")]
    if item.speed:
        lines.append(f"  - {md.text(item.speed)}")
    lines.append(f"  - {item.submissions} submission{'s' if item.submissions != 1 else ''}"
                 f"{f' and {item.unreadable} unreadable' if item.unreadable else ''}; hints on the question: "
                 f"{item.hints_used}; time on the part: {item.time_on_part_text or 'not measured'}")
    if item.final_attempt is not None:
        lines.append("  - final answer:")
        lines += md.fence(item.final_attempt.answer, "text", indent="    ")
    for run in item.runs:
        lines.append(f"  - run at `{run.offset or run.at.strftime('%H:%M:%S')}`: {md.text(run.outcome)}")
        if run.output:
            lines += md.fence(run.output, "text", indent="    ")
    for rubric_item in item.rubric:
        lines.append(f"  - rubric item {md.code(rubric_item.id)}: {md.text(rubric_item.text)}")
    return lines


def _judgement_markdown(part: JudgedPart) -> list[str]:
    """One scorecard's judgement of one part; the reason, typed, is always fenced."""
    judgement, label = part.judgement, md.text(part.evidence.label)
    auto = _score(judgement.auto_score if judgement else None)
    if not part.is_judged:
        line = f"- {label}: not judged (auto score {auto})"
    elif judgement.is_overridden:
        line = f"- {label}: overridden to {judgement.override_score:.2f} (auto score {auto})"
    elif part.evidence.rubric:
        line = f"- {label}: rubric ticked {len(part.ticked)} of {len(part.evidence.rubric)}, score {_score(part.score)}"
    else:
        line = f"- {label}: confirmed auto score {auto}"
    lines = [line]
    if part.ticked:
        lines.append(f"  - rubric items ticked: {', '.join(md.code(item) for item in part.ticked)}")
    if judgement is not None and judgement.reason:
        lines.append("  - reason:")
        lines += md.fence(judgement.reason, "text", indent="    ")
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
    evidence = part_evidence(interview)
    lines += ["", "## Evidence", "", f"Time on a part is measured {TIME_ON_PART_RULE}.", ""]
    for item in evidence:
        lines += _evidence_markdown(item)
    lines += ["", "## Timeline", ""]
    for entry in entries:
        lines += _event_markdown(entry)
    lines += ["", "## Scorecards", ""]
    scorecards = _submitted(interview)
    if not scorecards:
        lines.append("No scorecard submitted yet.")
    for scorecard in scorecards:
        lines += [f"### {md.text(scorecard.interviewer.username)}: {scorecard.get_recommendation_display()}", ""]
        for part in judged_parts(evidence, scorecard.judgements.all()):
            lines += _judgement_markdown(part)
        lines += [f"- {label} (rating of the earlier scorecard): {value}/4"
                  for _, label, value in scorecard.ratings() if value is not None]
        if scorecard.notes:
            lines += md.fence(scorecard.notes, "text", indent="")
        lines.append("")
    return "\n".join(lines) + "\n"
