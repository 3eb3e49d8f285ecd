"""Every code part in the bank, validated in the real sandbox: each listed solution gets
its stated verdict and fails exactly its stated groups. Slow (every solution runs, on
fixed seeds); skipped, with the sandbox's reason, where there is no sandbox."""

import pytest

from grading.kinds.code import validate_code_part
from grading.machine import sandbox_unavailable_reason
from grading.tests.test_code_kind import BANK_CODE_PARTS

REASON = sandbox_unavailable_reason()
pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(bool(REASON), reason=f"needs the sandbox: {REASON}")]


@pytest.mark.parametrize("part", BANK_CODE_PARTS)
def test_every_solution_of_every_bank_code_part_gets_its_verdict(part):
    assert validate_code_part(part, {}) == []
