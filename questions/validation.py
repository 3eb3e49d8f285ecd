"""Validate question files: `python -m questions.validation [FILE ...]`.

With no FILE, every file under questions/bank is checked. Each file prints `OK` or its
problems as `path:line: message`; the exit status is 1 when any file has a problem.

What is checked (questions/FORMAT.md is the contract):
- structure (questions.schema): required keys, types, topic, difficulty, seed, part ids,
  part kinds, checks' `when`; the file's folder is its topic and its name is
  `<seed:03d>-<slug>.yaml`; slugs and seeds are unique across the files checked together;
- with the grading engine: each part's spec loads; every parameter variant (all choice
  combinations, or a fixed sample of 64) builds its context and renders statement,
  prompts, hints, solution and follow-ups, including their LaTeX; each part of an
  auto-graded kind outside the sandbox (numeric, formula) has its reference answer graded
  correct and each listed mistake graded wrong with its feedback (on a few variants);
  sandboxed kinds check their example solutions (`validate_part`); the solution quotes
  each part's solution value (numeric parts' references); every `checks:` entry holds;
  no near miss (questions.mutations) lies inside a part's tolerance on any rendered
  variant unless the part waives it under `near_misses`, and no listed mistake does.

Pure Python: usable without Django. `validate_text` serves the browser authoring views.
"""

from __future__ import annotations

import functools
import itertools
import multiprocessing
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from grading import expressions, quantities, registry
from grading.machine import local_effects
from questions import mutations, rendering, variants
from questions.catalogue import load_catalogue
from questions.chains import chain_problems
from questions.labs.checks import generator_problems
from questions.loader import BANK_DIR, LineMap, LoadedFile, Problem, bank_files, load_file, load_text
from questions.schema import Question, check_structure
from questions.variants import ANSWERS

MAX_RENDERED_VARIANTS = 64  # variants whose templates are rendered, per question
MAX_GRADED_VARIANTS = 4  # variants on which reference answers and mistakes are graded
SAMPLE_SEED = 20240601  # fixed, so a sampled set of variants is the same on every run


@dataclass
class FileReport:
    """The outcome for one file: `question` is set when the structure was sound."""

    path: str
    problems: list[Problem]
    question: Question | None = None
    lines: LineMap | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


class _Reporter:
    """Collects problems for one file, once each: a fault that shows in all 64 variants
    is one problem, reported with the first variant that showed it."""

    def __init__(self, source: str, lines: LineMap):
        self.source = source
        self.lines = lines
        self.problems: list[Problem] = []
        self._seen: set = set()

    def add(self, path: tuple, message: str, choices: dict | None = None, *, same_as: object = None) -> None:
        """`same_as` names the fault when the message quotes variant values, so the
        same fault in another variant is not reported again."""
        key = (tuple(path), message if same_as is None else same_as)
        if key in self._seen:
            return
        self._seen.add(key)
        if choices:
            message = f"{message} [variant {describe_choices(choices)}]"
        self.problems.append(Problem(self.source, self.lines.line_of(path), message))


def describe_choices(choices: dict) -> str:
    return ", ".join(f"{name}={value}" for name, value in choices.items())


def _error_text(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _error_path(error: BaseException, default: tuple, prefix: tuple = ()) -> tuple:
    """Where a grading SpecError points: its `key` (`derived.floor`, `mistakes[1].answer`)
    as a path under `prefix`; `default` for other errors."""
    key = getattr(error, "key", None)
    if not isinstance(key, str) or not key:
        return default
    path: list = list(prefix)
    for piece in key.split("."):
        name, _, rest = piece.partition("[")
        path.append(name)
        for index in rest.replace("]", " ").replace("[", " ").split():
            path.append(int(index) if index.isdigit() else index)
    return tuple(path)


# ---------------------------------------------------------------- entry points


def validate_text(text: str, source: str = "<upload>", *, file_path: Path | None = None,
                  thorough: bool = True) -> FileReport:
    """Validate one question's YAML text; `file_path` also checks folder and file name.
    `thorough=False` checks what loading the bank needs to store nothing invalid (the
    structure, every variant's values and templates, references and listed mistakes
    graded) and leaves the authoring checks to `validate_questions` and CI: code and
    kernel parts' example solutions run in the sandbox, near misses, seed draws and a
    lab's determinism (they take minutes over the bank, and a start must not)."""
    return _validate_loaded(load_text(text, source), file_path, thorough)


def validate_file(path: Path | str, *, thorough: bool = True) -> FileReport:
    path = Path(path)
    return _validate_loaded(load_file(path), path, thorough)


def validate_paths(paths: list[Path | str] | None = None, *, thorough: bool = True,
                   jobs: int | None = None) -> list[FileReport]:
    """Validate files (default: the whole bank). Across them, slugs are unique and so
    are seeds (the seed number is the catalogue question's identity). Files are checked
    in `jobs` processes at once (default: one per CPU): each file's checks are CPU-bound
    Python and independent of the others'."""
    paths = bank_files() if paths is None else [Path(path) for path in paths]
    reports = _validate_each(paths, thorough, jobs or os.cpu_count() or 1)
    _check_unique(reports, "slug")
    _check_unique_seed_versions(reports)
    return reports


def _validate_each(paths: list[Path], thorough: bool, jobs: int) -> list[FileReport]:
    if jobs < 2 or len(paths) < 2 * jobs:
        return [validate_file(path, thorough=thorough) for path in paths]
    # Forked workers inherit the loaded engine and catalogue. Each sends back only its
    # file's problems (plain data); the parent reads the question again, which is cheap.
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        outcomes = pool.map(functools.partial(_problems_of, thorough=thorough), paths, chunksize=1)
    reports = []
    for path, (found, sound) in zip(paths, outcomes):
        loaded = load_file(path)
        question = Question.from_data(loaded.data) if sound else None
        reports.append(FileReport(loaded.path, found, question=question, lines=loaded.lines))
    return reports


def _problems_of(path: Path, *, thorough: bool) -> tuple[list[Problem], bool]:
    """A file's problems, and whether its structure was sound (its question loads)."""
    report = validate_file(path, thorough=thorough)
    return report.problems, report.question is not None


def _check_unique(reports: list[FileReport], key: str) -> None:
    first_seen: dict = {}
    for report in reports:
        if report.question is None:
            continue
        value = getattr(report.question, key)
        if value in first_seen:
            report.problems.append(
                Problem(report.path, report.lines.line_of((key,)),
                        f"{key} {value!r} is also used by {first_seen[value]}")
            )
        else:
            first_seen[value] = report.path


def _check_unique_seed_versions(reports: list[FileReport]) -> None:
    """A catalogue entry may be asked in several forms (a numeric question and a kernel
    to write), but two files with the same seed and the same kinds of part are a copy."""
    first_seen: dict = {}
    for report in reports:
        if report.question is None:
            continue
        kinds = tuple(sorted({part.kind for part in report.question.parts}))
        key = (report.question.seed, kinds)
        if key in first_seen:
            report.problems.append(Problem(
                report.path, report.lines.line_of(("seed",)),
                f"seed {key[0]} with parts of kinds {', '.join(kinds)} is also used by {first_seen[key]}",
            ))
        else:
            first_seen[key] = report.path


def _validate_loaded(loaded: LoadedFile, file_path: Path | None, thorough: bool = True) -> FileReport:
    report = FileReport(loaded.path, list(loaded.problems), lines=loaded.lines)
    if loaded.data is None:
        return report
    engine = load_engine()
    structural = check_structure(loaded.data, loaded.lines, loaded.path)
    if file_path is not None and isinstance(loaded.data, dict):
        structural += _check_location(loaded.data, loaded.lines, loaded.path, file_path)
    structural += _check_plain_data(loaded.data, loaded.lines, loaded.path)
    if not structural:
        structural += _check_catalogue_choices(loaded.data, loaded.lines, loaded.path)
    report.problems += structural
    if structural:
        return report
    report.question = Question.from_data(loaded.data)
    if engine is not None:
        report.problems += engine.check(report.question, loaded.lines, loaded.path, thorough=thorough)
    return report


def _check_catalogue_choices(data: dict, lines: LineMap, source: str) -> list[Problem]:
    """A catalogue parameter's choices are keys of that catalogue section."""
    try:
        catalogue = load_catalogue()
    except Exception as error:  # a broken catalogue is its own test's business
        return [Problem(source, lines.line_of(("params",)), f"the catalogue does not load: {_error_text(error)}")]
    problems = []
    for name, spec in (data.get("params") or {}).items():
        section = spec.get("catalogue")
        if section is None:
            continue
        known = catalogue.get(section, {})
        for index, choice in enumerate(spec["choices"]):
            if choice not in known:
                problems.append(
                    Problem(
                        source,
                        lines.line_of(("params", name, "choices", index)),
                        f"parameter {name!r}: {choice!r} is not in the {section} catalogue ({', '.join(known)})",
                    )
                )
    return problems


def _check_plain_data(data, lines: LineMap, source: str, path: tuple = ()) -> list[Problem]:
    """Values must survive a JSON column: YAML turns an unquoted `2024-06-01` into a date."""
    if isinstance(data, dict):
        return [problem for key, value in data.items()
                for problem in _check_plain_data(value, lines, source, path + (key,))]
    if isinstance(data, list):
        return [problem for index, value in enumerate(data)
                for problem in _check_plain_data(value, lines, source, path + (index,))]
    if data is None or isinstance(data, (str, int, float, bool)):
        return []
    return [Problem(source, lines.line_of(path), f"{type(data).__name__} value {data!r}: quote it to keep it text")]


def _check_location(data: dict, lines: LineMap, source: str, file_path: Path) -> list[Problem]:
    """The file lives at bank/<topic>/<seed:03d>-<slug>.yaml."""
    problems = []
    topic, seed, slug = data.get("topic"), data.get("seed"), data.get("slug")
    folder = file_path.resolve().parent.name
    if isinstance(topic, str) and folder != topic:
        problems.append(Problem(source, lines.line_of(("topic",)),
                                f"topic {topic!r} but the file is in folder {folder!r}"))
    if isinstance(seed, int) and isinstance(slug, str):
        expected = f"{seed:03d}-{slug}.yaml"
        if file_path.name != expected:
            problems.append(Problem(source, lines.line_of(("slug",)), f"file name should be {expected!r}"))
    return problems


# ---------------------------------------------------------------- the engine checks


def load_engine() -> "_Engine | None":
    """The grading-backed checks, or None when the grading engine is not importable
    (`engine_missing_reason()` then says why)."""
    return _engine_or_reason()[0]


def engine_missing_reason() -> str:
    return _engine_or_reason()[1]


@functools.cache
def _engine_or_reason() -> tuple:
    try:
        return _Engine(), ""
    except ImportError as error:
        return None, str(error)


def variant_choices(question: Question, limit: int = MAX_RENDERED_VARIANTS) -> list[dict]:
    """All combinations of parameter choices, or `limit` of them sampled with a fixed
    seed (always including the first choice of every parameter)."""
    names = [param.name for param in question.params]
    pools = [param.choices for param in question.params]
    total = 1
    for pool in pools:
        total *= len(pool)
    if total <= limit:
        return [dict(zip(names, combo)) for combo in itertools.product(*pools)]
    rng = random.Random(SAMPLE_SEED)
    picked = {tuple(0 for _ in pools)}
    while len(picked) < limit:
        picked.add(tuple(rng.randrange(len(pool)) for pool in pools))
    return [
        dict(zip(names, (pool[index] for pool, index in zip(pools, indexes))))
        for indexes in sorted(picked)
    ]


class _Engine:
    """Checks that need the grading engine and the catalogue."""

    def __init__(self):
        self.expressions = expressions
        self.registry = registry
        self.quantities = quantities
        self.rendering = rendering
        self.variants = variants
        self.effects = local_effects()  # the sandbox that runs example solutions, the bank's judges
        self.catalogue = None  # loaded on first use: a broken catalogue is a problem, not a crash

    def check(self, question: Question, lines: LineMap, source: str, *, thorough: bool = True) -> list[Problem]:
        report = _Reporter(source, lines)
        try:
            self.catalogue = load_catalogue()
        except Exception as error:
            report.add(("params",), f"the catalogue does not load: {_error_text(error)}")
            return report.problems
        specs = self._load_specs(question, report)
        graded, drawn = 0, []
        for choices in variant_choices(question):
            try:
                variant = self.variants.draw_variant(question, 0, choices=choices, catalogue=self.catalogue)
            except Exception as error:
                path = _error_path(error, ("derived",))
                report.add(path, f"cannot build the variant's values: {_error_text(error)}", choices, same_as="context")
                continue
            drawn.append(variant)
            answers = self._check_answers_evaluate(question, variant, report)
            self._check_templates(question, variant, answers, report)
            if graded < MAX_GRADED_VARIANTS and answers is not None:
                graded += 1
                self._check_grading(question, specs, variant, report)
                if graded == 1:
                    self._check_kind_specific(question, specs, variant, report, thorough)
        if thorough:
            self._check_near_misses(question, specs, drawn, report)
            self._check_seed_draws(question, report)
            for path, message in generator_problems(question, drawn):  # a lab's data: the same bytes twice
                report.add(path, message)
        self._check_checks(question, report)
        return report.problems

    def _check_near_misses(self, question: Question, specs: dict, variants: list, report: _Reporter) -> None:
        """No near miss (questions.mutations) inside a part's tolerance, on any variant."""
        bands = {part.id: part.engine.tolerance_band(specs[part.id]) if part.id in specs else None
                 for part in question.parts}
        # A chained reference names an earlier part (`answers.<id>`, credit carried
        # forward): its near misses are searched through that part's own answer too, as
        # they were before the chain was named.
        definitions = {**question.derived, **{f"{ANSWERS}.{part_id}": band.answer
                                              for part_id, band in bands.items() if band is not None}}
        for index, part in enumerate(question.parts):
            band = bands[part.id]
            if band is None:
                continue
            for finding in mutations.check_near_misses(index, part.id, band, definitions, variants):
                report.add(finding.path, finding.message, finding.choices, same_as=finding.same_as)

    def _load_specs(self, question: Question, report: _Reporter) -> dict:
        specs = {}
        for index, part in enumerate(question.parts):
            try:
                specs[part.id] = self.registry.get_kind(part.kind).load_spec(part.raw)
            except Exception as error:
                path = _error_path(error, ("parts", index), prefix=("parts", index))
                report.add(path, f"part {part.id!r}: {_error_text(error)}")
        return specs

    def _check_seed_draws(self, question: Question, report: _Reporter) -> None:
        """Attempts draw variants by seed; beyond the sampled variants, a few seeds must
        build too (reported like a variant that fails, once)."""
        for seed in range(8):
            try:
                variant = self.variants.draw_variant(question, seed, catalogue=self.catalogue)
            except Exception as error:
                message = f"cannot build the variant's values: {_error_text(error)} (seed {seed})"
                report.add(_error_path(error, ("derived",)), message, same_as="context")
                continue
            self._check_answers_evaluate(question, variant, report)

    def _check_answers_evaluate(self, question: Question, variant, report: _Reporter) -> dict | None:
        try:
            return self.variants.reference_values(question, variant.context)
        except Exception as error:
            failing = self._failing_answer_part(question, variant.context)
            report.add(failing, f"answer does not evaluate: {_error_text(error)}", variant.choices, same_as="answer")
            return None

    def _failing_answer_part(self, question: Question, context) -> tuple:
        """Where the first part whose solution value fails to evaluate is written."""
        for index, part in enumerate(question.parts):
            try:
                part.engine.solution_value(part.raw, context)
            except Exception:
                return ("parts", index, "answer")
        return ("parts",)

    def _render(self, template: str, context, path: tuple, report: _Reporter, choices: dict) -> str | None:
        try:
            filled = self.rendering.render_template(template, context)
        except Exception as error:
            report.add(path, f"template does not render: {_error_text(error)}", choices, same_as="template")
            return None
        for index, math_error in enumerate(self.rendering.render_markdown(filled).errors):
            report.add(path, math_error, choices, same_as=("math", index))
        return filled

    def _check_templates(self, question: Question, variant, answers: dict | None, report: _Reporter) -> None:
        context, choices = variant.context, variant.choices
        self._render(question.statement, context, ("statement",), report, choices)
        for index, part in enumerate(question.parts):
            self._render(part.prompt, context, ("parts", index, "prompt"), report, choices)
            for item_index, item in enumerate(part.rubric):
                path = ("parts", index, "rubric", item_index)
                self._render(str(item.get("text", "")), context, path, report, choices)
            if part.model_answer:
                path = ("parts", index, "model_answer")
                self._render(part.model_answer, context, path, report, choices)
            # Grading falls back to a mistake's raw text when its template fails, so a
            # broken one would reach candidates as '{{ ... }}' without this check.
            for mistake_index, mistake in enumerate(part.raw.get("mistakes") or ()):
                if isinstance(mistake, dict) and "{{" in str(mistake.get("feedback", "")):
                    path = ("parts", index, "mistakes", mistake_index, "feedback")
                    self._render(str(mistake["feedback"]), context, path, report, choices)
        for index, hint in enumerate(question.hints):
            self._render(hint, context, ("hints", index), report, choices)
        for index, followup in enumerate(question.followups):
            self._render(followup, context, ("followups", index), report, choices)
        if answers is None:
            return
        solution_context = self.variants.solution_context(context, answers)
        solution = self._render(question.solution, solution_context, ("solution",), report, choices)
        if solution is None:
            return
        for part in question.parts:
            if part.id not in answers:  # the parts a solution quotes (numeric ones)
                continue
            try:
                kind = self.registry.get_kind(part.kind)
                reference = kind.reference_answer(kind.load_spec(part.raw), context)
            except Exception:
                continue  # reported by _check_grading / _load_specs
            if reference not in solution:
                unit = f" | {part.unit}" if part.unit else ""
                report.add(
                    ("solution",),
                    f"the solution does not quote part {part.id!r}'s reference {reference!r};"
                    f" write {{{{ answers.{part.id}{unit} }}}}",
                    choices,
                    same_as=("unquoted reference", part.id),
                )

    def _check_grading(self, question: Question, specs: dict, variant, report: _Reporter) -> None:
        context, choices = variant.context, variant.choices
        for index, part in enumerate(question.parts):
            kind = part.engine
            # Self-assessed kinds have no verdict to check; sandboxed ones check their
            # example solutions once per question (_check_kind_specific), not per variant.
            if not kind.auto_graded or kind.runs_in_sandbox or part.id not in specs:
                continue
            spec = specs[part.id]
            path = ("parts", index, "answer")
            try:
                reference = kind.reference_answer(spec, context)
                verdict = kind.grade(spec, reference, context)
            except Exception as error:
                report.add(path, f"part {part.id!r}: grading the reference answer fails: {_error_text(error)}", choices,
                           same_as="reference fails")
                continue
            if not (verdict.valid and verdict.correct):
                report.add(
                    path,
                    f"part {part.id!r}: reference answer {reference!r} is not graded correct ({verdict.feedback})",
                    choices,
                    same_as=("reference wrong", part.id),
                )
            self._check_mistakes(part, index, kind, spec, context, report, choices)
        for problem in chain_problems(question, specs, context):  # credit carried forward
            report.add(problem.path, problem.message, choices, same_as=problem.key)

    def _check_kind_specific(self, question: Question, specs: dict, variant, report: _Reporter,
                             thorough: bool = True) -> None:
        """What only a part's kind can check (code: every example solution gets its
        expected verdict in the sandbox); once per question, on the first variant.
        Unless `thorough`, the kinds that run code are left to `validate_questions`."""
        for index, part in enumerate(question.parts):
            if part.id not in specs or (not thorough and part.engine.runs_in_sandbox):
                continue
            try:
                problems = self.registry.get_kind(part.kind).validate_part(specs[part.id], variant.context,
                                                                           effects=self.effects)
            except Exception as error:
                problems = [f"checking the part fails: {_error_text(error)}"]
            for problem in problems:
                report.add(("parts", index), f"part {part.id!r}: {problem}", variant.choices,
                           same_as=("kind check", part.id, problem))

    def _check_mistakes(self, part, index: int, kind, spec, context, report: _Reporter, choices: dict) -> None:
        try:
            mistakes = kind.mistake_answers(spec, context)
        except Exception as error:
            report.add(("parts", index, "mistakes"),
                       f"part {part.id!r}: mistakes do not evaluate: {_error_text(error)}", choices,
                       same_as="mistakes fail")
            return
        for mistake_index, (text, feedback) in enumerate(mistakes):
            path = ("parts", index, "mistakes", mistake_index)
            try:
                verdict = kind.grade(spec, text, context)
            except Exception as error:
                report.add(path, f"part {part.id!r}: grading mistake {text!r} fails: {_error_text(error)}", choices,
                           same_as="mistake fails")
                continue
            if verdict.correct:
                message = f"part {part.id!r}: mistake {text!r} is graded correct (too close to the answer?)"
                report.add(path, message, choices, same_as=("mistake correct", mistake_index))
            elif feedback not in (verdict.feedback or "") and feedback != (verdict.mistake or ""):
                message = f"part {part.id!r}: mistake {text!r} does not get its feedback (got {verdict.feedback!r})"
                report.add(path, message, choices, same_as=("mistake feedback", mistake_index))

    def _check_checks(self, question: Question, report: _Reporter) -> None:
        for index, check in enumerate(question.checks):
            path = ("checks", index)
            choices = {param.name: param.choices[0] for param in question.params}
            choices.update(check.when)
            try:
                variant = self.variants.draw_variant(question, 0, choices=choices, catalogue=self.catalogue)
                value = self.expressions.evaluate(check.expr, variant.context)
                expected = self.quantities.parse_quantity(str(check.equals))
                value_magnitude, expected_magnitude = _comparable_magnitudes(value, expected)
            except Exception as error:
                report.add(path, f"check {check.expr!r} cannot be computed: {_error_text(error)}", choices)
                continue
            if abs(value_magnitude - expected_magnitude) > check.rtol * abs(expected_magnitude):
                report.add(
                    path,
                    f"check {check.expr!r} gives {value_magnitude:.4g}{_unit_suffix(expected)}, expected {check.equals}"
                    f" (rtol {check.rtol})",
                    choices,
                )


def _unit_suffix(quantity) -> str:
    units = getattr(quantity, "units", None)
    return f" {units:~P}" if units is not None and not quantity.dimensionless else ""


def _comparable_magnitudes(value, expected) -> tuple[float, float]:
    """Both values as plain floats in `expected`'s unit; raises on a dimension mismatch."""
    expected_units = getattr(expected, "units", None)
    if expected_units is None:  # a plain number: the value must be dimensionless
        if hasattr(value, "to"):
            value = value.to("dimensionless")
        return float(getattr(value, "magnitude", value)), float(expected)
    if not hasattr(value, "to"):
        if expected.dimensionless:
            return float(value), float(expected.to("dimensionless").magnitude)
        raise ValueError(f"a plain number where {expected_units} was expected")
    return float(value.to(expected_units).magnitude), float(expected.magnitude)


# ---------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if any(arg in ("-h", "--help") for arg in args):
        print(__doc__)
        return 0
    paths = [Path(arg) for arg in args] or bank_files()
    if not paths:
        print(f"no question files under {BANK_DIR}")
        return 0
    if load_engine() is None:
        print(
            f"NOTE: the grading engine is not importable ({engine_missing_reason()}), so only the"
            " structure was checked; variants, templates, answers, mistakes and checks were NOT."
        )
    reports = validate_paths(paths)
    ok_word = "OK" if load_engine() else "OK (structure only)"
    for report in reports:
        if report.ok:
            print(f"{report.path}: {ok_word}")
        for problem in sorted(report.problems, key=lambda problem: problem.line or 0):
            print(problem)
    failed = sum(1 for report in reports if not report.ok)
    print(f"{len(reports) - failed} of {len(reports)} files OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
