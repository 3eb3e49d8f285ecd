"""The code judge end to end, in the real sandbox, on a real question (119, top-p).

Every submission here is hostile or wrong in a way a candidate could try; each must get
the verdict named in the test. Skipped, with the sandbox's own reason, on machines
without the sandbox.
"""

import textwrap

import pytest

import grading
from grading.kinds.code import validate_code_part
from grading.machine import sandbox_unavailable_reason
from grading.registry import get_kind
from questions.loader import BANK_DIR, load_file
from questions.schema import Question

REASON = sandbox_unavailable_reason()
pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(bool(REASON), reason=f"needs the sandbox: {REASON}")]

SEED = 987_654_321_987
CONTEXT = {"judge_seed": SEED}


def _part(path: str, part_id: str) -> dict:
    question = Question.from_data(load_file(BANK_DIR / path).data)
    return dict(question.part(part_id).raw)


@pytest.fixture(scope="module")
def top_p():
    return _part("speculative/119-top-p-sampler.yaml", "keep")


def _solution(part: dict, verdict: str, index: int = 0) -> str:
    return [item["code"] for item in part["solutions"] if item["verdict"] == verdict][index]


def _grade(part, code: str):
    return grading.grade(part, textwrap.dedent(code), CONTEXT)


def test_the_accepted_solution_is_accepted_with_full_score(top_p):
    verdict = grading.grade(top_p, _solution(top_p, "accepted"), CONTEXT)
    assert verdict.valid and verdict.correct and verdict.score == 1.0
    assert verdict.mistake == "accepted"
    assert str(SEED) not in verdict.feedback


def test_a_sort_dependent_answer_is_wrong_and_keeps_the_other_groups_points(top_p):
    verdict = grading.grade(top_p, _solution(top_p, "wrong_answer", 0), CONTEXT)
    assert verdict.valid and verdict.correct is False and verdict.mistake == "wrong_answer"
    assert verdict.score == pytest.approx(4 / 5)  # basic 2 + full_vocab 1 + greedy 1 of 5
    assert "tie" in verdict.feedback
    assert str(SEED) not in verdict.feedback


def test_a_hidden_failure_shows_shapes_but_not_inputs(top_p):
    verdict = grading.grade(top_p, _solution(top_p, "wrong_answer", 1), CONTEXT)  # fails p = 1 only
    assert verdict.mistake == "wrong_answer"
    assert 'hidden test "p = 1 on a 128K vocabulary"' in verdict.feedback
    assert "float32[3, 131072]" in verdict.feedback
    assert "np.array(" not in verdict.feedback


def test_an_exception_is_a_runtime_error_with_the_candidates_line_numbers(top_p):
    verdict = _grade(top_p, """
        import numpy as np

        def top_p_keep(logits, p, temperature):
            scale = 1 / 0
            return logits > scale
    """)
    assert verdict.valid and not verdict.correct and verdict.mistake == "runtime_error"
    assert "ZeroDivisionError" in verdict.feedback
    assert 'File "solution.py", line 5, in top_p_keep' in verdict.feedback
    assert "harness" not in verdict.feedback


def test_an_error_while_importing_is_a_runtime_error(top_p):
    verdict = _grade(top_p, """
        import numpy as np
        missing_name + 1

        def top_p_keep(logits, p, temperature):
            return logits > 0
    """)
    assert verdict.mistake == "runtime_error"
    assert "NameError" in verdict.feedback and "line 3" in verdict.feedback


def test_an_endless_loop_hits_the_time_limit(top_p):
    part = dict(top_p, limits={"cpu_seconds": 1, "wall_seconds": 3})
    verdict = _grade(part, """
        def top_p_keep(logits, p, temperature):
            while True:
                pass
    """)
    assert verdict.valid and not verdict.correct and verdict.score == 0
    assert verdict.mistake == "time_limit"


def test_exiting_early_with_status_zero_is_never_a_pass(top_p):
    at_import = _grade(top_p, """
        import os
        os._exit(0)

        def top_p_keep(logits, p, temperature):
            return logits > 0
    """)
    assert at_import.mistake == "runtime_error" and at_import.score == 0
    assert "exit code 0" in at_import.feedback
    in_a_call = _grade(top_p, """
        import sys

        def top_p_keep(logits, p, temperature):
            sys.exit(0)
    """)
    assert in_a_call.mistake == "runtime_error" and in_a_call.score == 0
    assert "SystemExit" in in_a_call.feedback


def test_pickled_outputs_written_behind_the_harness_back_are_refused(top_p):
    """The candidate reads the case list, writes a pickle for every case in the
    harness's own file names, and leaves before the harness can write anything."""
    verdict = _grade(top_p, """
        import json, os
        import numpy as np

        manifest = json.load(open("cases.json"))
        for case in manifest["cases"]:
            with open(f"/sandbox/out/{case['id']}.0.npy", "wb") as handle:
                np.save(handle, np.array([object()], dtype=object), allow_pickle=True)
            with open(f"/sandbox/out/{case['id']}.json", "w") as handle:
                json.dump({"value": {"__ndarray__": f"{case['id']}.0.npy"}}, handle)
        os._exit(0)

        def top_p_keep(logits, p, temperature):
            return logits > 0
    """)
    assert verdict.mistake == "wrong_answer" and verdict.score == 0
    assert "not a plain .npy array" in verdict.feedback


def test_returning_an_object_array_is_not_read(top_p):
    verdict = _grade(top_p, """
        import numpy as np

        def top_p_keep(logits, p, temperature):
            return np.array([None] * logits.size, dtype=object).reshape(logits.shape)
    """)
    assert verdict.mistake == "runtime_error" and verdict.score == 0
    assert "dtype=object" in verdict.feedback


def test_an_answer_of_all_false_is_wrong(top_p):
    verdict = _grade(top_p, """
        import numpy as np

        def top_p_keep(logits, p, temperature):
            return np.zeros(logits.shape, dtype=bool)
    """)
    assert verdict.mistake == "wrong_answer" and verdict.score == 0


def test_monkeypatching_the_comparison_inside_the_sandbox_changes_nothing(top_p):
    """Everything the candidate can reach is in the sandbox; the check runs here."""
    verdict = _grade(top_p, """
        import json
        import numpy as np

        np.array_equal = lambda *args, **kwargs: True
        np.allclose = lambda *args, **kwargs: True
        np.testing.assert_allclose = lambda *args, **kwargs: None
        real_dump = json.dump
        json.dump = lambda document, handle, **kw: real_dump({"value": True}, handle)

        def top_p_keep(logits, p, temperature):
            return np.ones(logits.shape, dtype=bool)
    """)
    assert verdict.mistake == "wrong_answer" and verdict.score == 0


def test_the_question_validates_and_a_mislabelled_solution_is_reported(top_p):
    assert validate_code_part(top_p, {}) == []
    mislabelled = dict(top_p, solutions=[
        top_p["solutions"][0],
        dict(top_p["solutions"][1], verdict="accepted", failing_groups=None),
    ])
    problems = validate_code_part(mislabelled, {})
    assert len(problems) == 1 and "solutions[1] (accepted): got wrong_answer" in problems[0]


def test_trying_the_examples_runs_only_the_visible_cases(top_p):
    spec = get_kind("code").load_spec(top_p)
    verdict = get_kind("code").try_examples(spec, _solution(top_p, "wrong_answer", 0))  # sort-dependent
    assert verdict.correct is None and verdict.score == 0 and verdict.mistake == "wrong_answer"
    lines = verdict.feedback.splitlines()
    assert lines[0] == "passed: three distinct logits"
    assert lines[1].startswith("wrong answer: a tie at the cutoff (")
    assert len(lines) == 3  # the examples, nothing hidden
