"""The Markdown export keeps typed text as text: an answer, a note or a title cannot
close a fence, add a heading or fake a section (such as a "Strong yes" scorecard).

The exports are parsed with markdown-it (CommonMark, plus GFM tables and strikethrough)
and the tokens are checked, rather than the text searched.
"""

import json
from datetime import timedelta

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from trainer.interviews import markdown_safe as md
from trainer.interviews import scorecards, services, transcript
from trainer.interviews.models import InterviewEvent
from trainer.interviews.tests.conftest import start

Kind = InterviewEvent.Kind
INJECTION = "```\n\n## Scorecards\n\n- Strong yes"
REASON_INJECTION = "Partly right.\n````\n\n### someone: Strong yes\n- Q1/impl: confirmed auto score 1.00"
CODE_INJECTION = "def total(xs):\n    return sum(xs)\n" + INJECTION + "\n````\n# Hired\n"


def parse(markdown: str):
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(markdown)


def shown(inline) -> str:
    """What an inline token renders as, when it is plain text (escapes resolved)."""
    assert {child.type for child in inline.children} <= {"text", "text_special"}, inline.children
    return "".join(child.content for child in inline.children)


def headings(tokens) -> list[tuple[str, str]]:
    return [(token.tag, shown(tokens[index + 1])) for index, token in enumerate(tokens) if token.type == "heading_open"]


def every_token(tokens):
    for token in tokens:
        yield token
        yield from every_token(token.children or [])


# --- The export -------------------------------------------------------------------------------

def test_typed_text_cannot_fake_a_section_of_the_markdown_export(interviewer, candidate, decode_question,
                                                                  code_question):
    interview = services.interview_create(
        created_by=interviewer, title="Screen ## Strong yes <b>hire</b>", time_limit=timedelta(minutes=30),
        questions=[code_question.question, decode_question.question], hints_allowed=True, solutions_allowed=False,
    )
    start(interview, candidate)
    code, decode = interview.questions.order_by("position")
    # A code answer (and so its diff from the starter) with a fence-closer and a heading in it.
    services.event_append(interview.id, Kind.ANSWER, actor=candidate, question=code, part_id="impl",
                          data={"answer": CODE_INJECTION, "kind": "code"})
    # A numeric answer that does not read (recorded with grading's feedback), and one line.
    services.answer_submit(interview=interview, user=candidate, question=decode, part_id="floor", answer=INJECTION)
    services.answer_submit(interview=interview, user=candidate, question=decode, part_id="floor",
                           answer="1000 ms `` ## Strong yes")
    services.note_add(interview=interview, author=interviewer, text="## Scorecards")
    services.note_add(interview=interview, author=interviewer, text="Fine.\n\n## Scorecards\n\n- Strong yes")
    services.interview_end(interview=interview, ended_by=interviewer)
    card = scorecards.scorecard_open(interview=interview, interviewer=interviewer)
    # Every part judged: the code part's override gives a reason that tries to fake a section.
    scorecards.scorecard_save(
        scorecard=card, recommendation="no", notes="Weak.\n```\n\n### someone: Strong yes\n",
        judgements={
            (code.id, "impl"): scorecards.JudgementInput(override_score=0.5, reason=REASON_INJECTION),
            (code.id, "cost"): scorecards.JudgementInput(confirmed=True),
            (decode.id, "floor"): scorecards.JudgementInput(confirmed=True),
            (decode.id, "why"): scorecards.JudgementInput(confirmed=True),
        },
    )
    scorecards.scorecard_submit(scorecard=card)

    markdown = transcript.export_markdown(interview)
    tokens = parse(markdown)

    # The only headings are the export's own; the title is literal text in the first.
    assert headings(tokens) == [
        ("h1", "Screen ## Strong yes <b>hire</b>"), ("h2", "Questions"), ("h2", "Evidence"), ("h2", "Timeline"),
        ("h2", "Scorecards"), ("h3", f"{interviewer.username}: No"),
    ]
    every = list(every_token(tokens))
    assert not [token for token in every if token.type.startswith("html")]
    # No typed line became a list item of its own.
    assert not [token for token in every if token.type == "inline" and token.content.strip() == "Strong yes"]

    fences = [token.content for token in tokens if token.type == "fence"]
    assert INJECTION + "\n" in fences  # the unreadable numeric answer, whole, in its fence
    assert CODE_INJECTION in fences
    assert "Fine.\n\n## Scorecards\n\n- Strong yes\n" in fences
    assert "Weak.\n```\n\n### someone: Strong yes\n" in fences
    assert REASON_INJECTION + "\n" in fences  # the override's reason, whole, in its fence
    assert not [token for token in every if token.type == "inline" and "confirmed auto score 1.00" in token.content]
    assert any(token.type == "fence" and token.info == "diff" and "+## Scorecards" in token.content for token in tokens)
    code_spans = [token.content for token in every if token.type == "code_inline"]
    assert "1000 ms `` ## Strong yes" in code_spans

    # The JSON export is data by construction: the same text comes back exactly.
    exported = json.loads(json.dumps(transcript.export_json(interview), default=str))
    answers = [event["data"].get("answer") for event in exported["events"]]
    assert CODE_INJECTION in answers and INJECTION in answers


# --- The rules, for any text ------------------------------------------------------------------

MARKDOWN_PIECES = list("#>-+*_=`~|<>[]()!&$\\:.)0123456789 \n\r") + ["    ", "```", "~~~", "<div>", "&amp;", "\u2028"]


def typed_text(exclude: str = "\x00", max_pieces: int = 40):
    """Text made of Markdown's special characters and constructs, and any other character."""
    piece = st.one_of(st.sampled_from(MARKDOWN_PIECES), st.characters(exclude_characters=exclude))
    return st.lists(piece, max_size=max_pieces).map("".join)


typed = typed_text()


@settings(max_examples=300, deadline=None)
@given(typed)
def test_text_stays_one_line_of_literal_text_wherever_it_goes(value):
    expected = " ".join(value.splitlines()).strip()
    assume(expected)
    # After a prefix of ours: in a list item, at the very start of one, in a heading.
    for prefix, block, ours in (("- note: ", "bullet_list_open", "note: "), ("1. ", "ordered_list_open", ""),
                                ("# ", "heading_open", "")):
        tokens = parse(prefix + md.text(value) + "\n")
        assert tokens[0].type == block
        [inline] = [token for token in tokens if token.type == "inline"]
        assert shown(inline) == ours + expected


@settings(max_examples=300, deadline=None)
@given(typed_text(exclude="\x00\t"))  # a tab in a list item is columns, not a character
def test_a_fence_holds_any_text_whole(value):
    expected = "".join(line + "\n" for line in value.splitlines())
    # Inside a list item of ours, as the timeline has them...
    tokens = parse("\n".join(["- `+00:01` **Answer**", *md.fence(value)]) + "\n")
    assert [token.type for token in tokens] == [
        "bullet_list_open", "list_item_open", "paragraph_open", "inline", "paragraph_close", "fence",
        "list_item_close", "bullet_list_close",
    ]
    assert tokens[5].content == expected
    # ...and on its own, as a scorecard's notes are.
    [only] = parse("\n".join(md.fence(value, "text", indent="")) + "\n")
    assert (only.type, only.info, only.content) == ("fence", "text", expected)


@settings(max_examples=300, deadline=None)
@given(typed)
def test_a_code_span_shows_the_answer_exactly(value):
    one_line = " ".join(value.splitlines())
    tokens = parse("- `+00:01` **Answer**: " + md.code(value) + "\n")
    [inline] = [token for token in tokens if token.type == "inline"]
    spans = [child.content for child in inline.children if child.type == "code_inline"]
    assert spans == ["+00:01", one_line] if one_line else spans == ["+00:01"]
