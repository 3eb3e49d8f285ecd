"""Counts in rendered text agree with their nouns, and zero terms are reworded: the
`plural` template and `{% if %}` in `questions.rendering.render_template`, and a scan of
every bank question's text in every variant for "the 1 GPUs", "0 all-reduces" and the
like."""

import re

import pytest

from questions.loader import bank_files, load_file
from questions.rendering import render_template
from questions.schema import Question
from questions.validation import variant_choices
from questions.variants import draw_variant, reference_values, solution_context

CONTEXT = {"tp": 1, "gpus": 8, "zero": 0, "half": 0.5, "allreduces": 0, "layers": 80}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("the {{ tp | plural: GPU }}", "the 1 GPU"),
        ("the {{ gpus | plural: GPU }}", "the 8 GPUs"),
        ("{{ zero | plural: layer }}", "0 layers"),
        ("{{ half | plural: token }}", "0.5 tokens"),
        ("{{ tp | plural: query, queries }} and {{ gpus | plural: query, queries }}", "1 query and 8 queries"),
        ("{{ gpus | | d }} × {{ tp | plural: KV head }}", "8 × 1 KV head"),
    ],
)
def test_plural_agrees_with_the_count(template, expected):
    assert render_template(template, CONTEXT) == expected


def test_if_drops_a_term_that_is_zero():
    template = "0.5 ms{% if allreduces %} + {{ allreduces | | d }} × 15 us{% endif %}"
    assert render_template(template, CONTEXT) == "0.5 ms"
    assert render_template(template, {**CONTEXT, "allreduces": 160}) == "0.5 ms + 160 × 15 us"


def test_if_else_rewords_the_zero_case():
    template = ("{% if allreduces %}{{ allreduces | plural: all-reduce }}"
                "{% else %}no all-reduces, since TP is 1{% endif %}")
    assert render_template(template, CONTEXT) == "no all-reduces, since TP is 1"
    assert render_template(template, {**CONTEXT, "allreduces": 2}) == "2 all-reduces"


def test_if_on_a_quantity_tests_its_magnitude():
    from grading.units import Quantity, ureg

    template = "{% if stall %}stalls {{ stall | ms }}{% else %}never stalls{% endif %}"
    assert render_template(template, {"stall": Quantity(0, ureg.ms)}) == "never stalls"
    assert render_template(template, {"stall": Quantity(2, ureg.ms)}) == "stalls 2 ms"


@pytest.mark.parametrize(
    "template",
    [
        "{% if tp %}a{% if gpus %}b{% endif %}c{% endif %}",  # nested
        "{% if tp %}never closed",
        "{% endif %}",
        "{{ tp | plural: }}",
        "{{ tp | plural: a, b, c }}",
        "{{ nothing | plural: GPU }}",
        "{% if nothing %}x{% endif %}",
    ],
)
def test_malformed_wording_templates_are_template_errors(template):
    from grading.templating import TemplateError

    with pytest.raises(TemplateError):
        render_template(template, CONTEXT)


# ---------------------------------------------------------------- the bank

SEEDS = range(6)
# A number the variant printed is wrapped in these while scanning (see `printed`), so
# counts an author wrote ("1 means the plan is right", "k + 1 positions", "query 0 sees
# nothing") are not judged: only a count that changes with the variant can disagree.
START, END = "\x02", "\x03"
UNITS = {"ms", "us", "ns", "s", "mins", "hours", "days", "bits", "FLOPs"}
# Words that may stand between a count and its noun ("1 spare replicas", "1 KV heads").
MODIFIERS = {"spare", "more", "extra", "shared", "redundant", "wasted", "routed", "KV", "query", "new", "idle"}
WORD = r"[A-Za-z][\w-]*"
# "1 GPUs", "= 1 blocks", "1 spare replicas", "0 all-reduces"; not "k + 1 positions",
# where the number is a term of a sum and the noun counts the sum.
COUNT_THEN_WORDS = re.compile(
    rf"(?<![+−\-] ){START}(?P<count>[01]){END}\s+(?:\*\*)?(?P<first>{WORD})(?:\s+(?P<second>{WORD}))?")
# "0 × 15 us": a term of a sum that is zero in this variant.
ZERO_TERM = re.compile(rf"{START}0{END}\s+(?:×|\\times|\$\\times\$)\s")
# "1 GPU(s)", "8 KV head(s)": the plural template says it properly.
MAYBE_PLURAL = re.compile(rf"{START}[\d.,]+{END}\s+(?:{WORD}\s+){{0,2}}{WORD}\(s\)")


@pytest.fixture
def printed(monkeypatch):
    """`render_template` with every value a `{{ }}` prints wrapped in START/END."""
    from grading import templating

    render_one = templating._render_one
    monkeypatch.setattr(templating, "_render_one", lambda inner, context: START + render_one(inner, context) + END)
    return render_template


def _is_plural(word: str | None) -> bool:
    return bool(word) and word.endswith("s") and not word.endswith("ss") and word not in UNITS


def wording_problems(text: str) -> list[str]:
    """The phrases in marked `text` whose printed count and noun disagree, or that spell
    out a zero term."""
    found = []
    for match in COUNT_THEN_WORDS.finditer(text):
        first, second = match.group("first"), match.group("second")
        if _is_plural(first) or (first in MODIFIERS and _is_plural(second)):
            found.append(match.group(0))
    found += [match.group(0) for match in ZERO_TERM.finditer(text)]
    found += [match.group(0) for match in MAYBE_PLURAL.finditer(text)]
    return [re.sub(r"\s+", " ", phrase.replace(START, "").replace(END, "")) for phrase in found]


@pytest.mark.parametrize(
    ("template", "found"),
    [
        ("so the {{ tp }} GPUs read their slices", ["1 GPUs read"]),
        ("with {{ zero }} all-reduces per step", ["0 all-reduces per"]),
        ("0.5 ms + {{ zero }} × 15 us", ["0 × "]),
        ("{{ tp }} sequence(s) × 8 KV heads", ["1 sequence(s)"]),
        ("{{ gpus }} GPU(s)", ["8 GPU(s)"]),
        ("it needs {{ tp }} spare\n  replicas", ["1 spare replicas"]),
        ("the {{ tp }} H200s", ["1 H200s"]),
        ("it needs {{ tp | plural: spare replica }}", []),
        ("k + {{ tp }} positions; {{ tp }} GPU holds it; {{ gpus }} blocks; 1 means right; {{ zero }} ms", []),
    ],
)
def test_the_scan_finds_what_reviewers_saw(printed, template, found):
    assert wording_problems(printed(template, CONTEXT)) == found


def _texts(question: Question):
    """(where, template, needs the solution's `answers`) for every text a candidate reads."""
    yield "statement", question.statement, False
    for part in question.parts:
        yield f"parts.{part.id}.prompt", part.prompt, False
        for item in part.rubric:
            yield f"parts.{part.id}.rubric", str(item.get("text", "")), False
        if part.model_answer:
            yield f"parts.{part.id}.model_answer", part.model_answer, False
    for index, hint in enumerate(question.hints):
        yield f"hints.{index}", hint, False
    yield "solution", question.solution, True
    for index, followup in enumerate(question.followups):
        yield f"followups.{index}", followup, False


def _variants(question: Question):
    for choices in variant_choices(question):
        yield draw_variant(question, 0, choices=choices)
    for seed in SEEDS:
        yield draw_variant(question, seed)


BANK_FILES = bank_files()


@pytest.mark.parametrize("path", BANK_FILES, ids=[path.name for path in BANK_FILES])
def test_bank_text_has_no_disagreeing_counts_or_zero_terms(printed, path):
    question = Question.from_data(load_file(path).data)
    problems = set()
    for variant in _variants(question):
        with_answers = solution_context(variant.context, reference_values(question, variant.context))
        for where, template, needs_answers in _texts(question):
            text = printed(template, with_answers if needs_answers else variant.context)
            problems.update(f"{where}: {phrase!r}" for phrase in wording_problems(text))
    assert not problems, "\n".join(sorted(problems))
