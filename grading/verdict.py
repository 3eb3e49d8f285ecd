"""The verdict: what the engine says about one answer to one part."""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class Verdict:
    """The outcome of ``interpret`` or ``grade``.

    - ``valid``: the answer could be read. An invalid answer costs the candidate no
      attempt; the caller decides that from this flag.
    - ``correct``: True/False once graded; None when a person must judge (explain
      parts) or when nothing was graded (``interpret``).
    - ``score``: 0..1 for this part (partial credit lies between).
    - ``interpreted`` / ``interpreted_html``: what the engine understood, as plain text
      and as HTML (MathML for formulas, escaped text otherwise).
    - ``feedback``: plain words for the candidate; never reveals the reference.
    - ``mistake``: which listed mistake or classic slip was recognized, if any.
    - ``expected``: the reference, rendered, to reveal after answering ("" from
      ``interpret`` and for invalid answers).
    """

    valid: bool
    correct: bool | None
    score: float
    interpreted: str = ""
    interpreted_html: str = ""
    feedback: str = ""
    mistake: str | None = None
    expected: str = ""

    def __post_init__(self):
        if not 0.0 <= self.score <= 1.0:
            raise ValueError(f"score must lie in [0, 1], got {self.score}")
        if not self.valid and self.correct:
            raise ValueError("an invalid answer cannot be correct")

    @classmethod
    def invalid(cls, message: str, interpreted: str = "") -> Verdict:
        """An answer that could not be read: ``message`` says where and why."""
        return cls(valid=False, correct=False, score=0.0, interpreted=interpreted,
                   interpreted_html=html.escape(interpreted), feedback=message)

    def to_dict(self) -> dict:
        """A JSON-ready dict; ``Verdict.from_dict(v.to_dict()) == v``."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Verdict:
        """Rebuild a verdict stored with ``to_dict``. Unknown keys are ignored (so older
        rows survive added fields); wrong types raise ``ValueError``."""
        known = {field.name for field in fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        if not isinstance(values.get("valid"), bool):
            raise ValueError("verdict needs a boolean 'valid'")
        if values.get("correct") not in (True, False, None):
            raise ValueError("verdict 'correct' must be true, false or null")
        score = values.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise ValueError("verdict needs a numeric 'score'")
        values["score"] = float(score)
        for name in ("interpreted", "interpreted_html", "feedback", "expected"):
            if not isinstance(values.setdefault(name, ""), str):
                raise ValueError(f"verdict '{name}' must be a string")
        mistake = values.setdefault("mistake", None)
        if mistake is not None and not isinstance(mistake, str):
            raise ValueError("verdict 'mistake' must be a string or null")
        return cls(**values)
