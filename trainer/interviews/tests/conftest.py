"""Small helpers for interview tests: an interview at each stage, and a code question."""

from datetime import timedelta

import pytest

from trainer.interviews import services

CODE_QUESTION_DATA = {
    "slug": "test-code-sum",
    "seed": 2,
    "title": "Sum the list (test code question)",
    "topic": "kernels",
    "difficulty": 1,
    "summary": "Write a function.",
    "statement": "Add up the numbers.",
    "parts": [
        {
            "id": "impl",
            "kind": "code",
            "prompt": "Write `total(xs)`.",
            "entrypoint": "total",
            "starter": "def total(xs):\n    raise NotImplementedError\n",
        },
        {
            "id": "cost",
            "kind": "explain",
            "prompt": "What does it cost?",
            "rubric": [{"id": "linear", "text": "Linear in the length"}],
            "model_answer": "O(n).",
        },
    ],
    "solution": "Use `sum`.",
}


@pytest.fixture
def code_question(db, admin_user):
    """A question with a code part (`impl`, with a starter) and an explain part, stored
    directly: code parts' grading is another module's work, the editor record is ours."""
    from questions.tests.factories import store_version

    return store_version(CODE_QUESTION_DATA, source_text="(test)")


def make_interview(creator, *versions, minutes: int = 30, hints: bool = True, solutions: bool = False):
    return services.interview_create(
        created_by=creator, title="Inference systems screen", questions=[version.question for version in versions],
        time_limit=timedelta(minutes=minutes), hints_allowed=hints, solutions_allowed=solutions,
    )


def join(interview, candidate):
    return services.invite_accept(token=interview.invite_token, user=candidate)


def start(interview, candidate):
    join(interview, candidate)
    return services.interview_start(interview=interview, user=candidate)


@pytest.fixture
def interview(interviewer, decode_question):
    """Created by `interviewer` over the decode question; nobody has joined."""
    return make_interview(interviewer, decode_question)


@pytest.fixture
def started_interview(interview, candidate):
    """`interview`, joined by `candidate`, clock running."""
    return start(interview, candidate)


RUNNABLE_CODE_FILE = "questions/bank/speculative/119-top-p-sampler.yaml"


@pytest.fixture
def runnable_code_question(db):
    """The bank's top-p question (one code part, `keep`, with a judge and visible
    examples), stored as it is: its solutions are checked by validate_questions already."""
    return bank_version(RUNNABLE_CODE_FILE)


@pytest.fixture
def kernel_question(db):
    """The bank's looped-softmax question: one Triton kernel part, `kernel`."""
    return bank_version("questions/bank/kernels/123-looped-softmax-vocab.yaml")


def bank_version(path: str):
    """A bank question file stored as version 1 of its question."""
    from questions.loader import load_file
    from questions.tests.factories import store_version

    return store_version(load_file(path).data)


def code_solution(version, verdict: str = "accepted") -> str:
    """An author's solution of the question's code (or kernel) part with the given verdict."""
    part = next(part for part in version.as_question().parts if part.kind in ("code", "kernel"))
    return next(item["code"] for item in part.raw["solutions"] if item["verdict"] == verdict)


def editor_replace(page, part_id: str, text: str) -> None:
    """Replace the text of a part's CodeMirror editor in a browser page, in one change
    (as a paste would), so the room's recorder sees it in one snapshot."""
    page.locator(f"#part-{part_id} .cm-editor").wait_for()
    page.evaluate(
        """([selector, text]) => {
            const view = document.querySelector(selector).editorView;
            view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
        }""",
        [f"#part-{part_id} textarea.code", text],
    )


@pytest.fixture
def two_people(browser):
    """An interviewer's and a candidate's browser pages, in separate contexts (cookies)."""
    interviewer_context, candidate_context = browser.new_context(), browser.new_context()
    pages = []
    for context in (interviewer_context, candidate_context):
        page = context.new_page()
        page.set_default_timeout(15_000)
        pages.append(page)
    yield pages
    interviewer_context.close()
    candidate_context.close()
