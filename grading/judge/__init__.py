"""The code judge: runs a candidate's Python in the sandbox against a question's tests.

Trusted and untrusted halves never mix:
- a question's judge module (``questions/bank/<topic>/*.judge.py``, reviewed code,
  ``contract.Judge``) draws the test cases from a secret seed and computes the
  references, here on the trusted side;
- the candidate's ``solution.py`` runs only in the sandbox, called by ``harness.py``,
  which writes each case's output as JSON and ``.npy`` files;
- ``cases.decode_output`` reads those back without pickle and the judge's ``check``
  decides. A missing or unreadable output is never a pass.

``judge_submission`` (``runner``) does one submission; the ``code`` answer kind
(``grading.kinds.code``) turns its ``JudgeReport`` into a ``Verdict``.
"""

from grading.judge.cases import Call, Case
from grading.judge.compare import Tolerance, compare_arrays, compare_values, tolerance_for
from grading.judge.contract import BANK_ROOT, Judge, JudgeNotFound, judge_path, load_judge
from grading.judge.runner import CaseResult, JudgeReport, Outcome, judge_submission

__all__ = [
    "BANK_ROOT", "Call", "Case", "CaseResult", "Judge", "JudgeNotFound", "JudgeReport", "Outcome",
    "Tolerance", "compare_arrays", "compare_values", "judge_path", "judge_submission", "load_judge",
    "tolerance_for",
]
