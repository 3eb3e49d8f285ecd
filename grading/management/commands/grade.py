"""Grade one answer from the command line, exactly as the site would.

    manage.py grade SLUG --part PART --answer "TEXT" [--seed N] [--choice NAME=VALUE ...] [--json]
    manage.py grade SLUG --part PART --file solution.py [--judge-seed N] [--json]
    manage.py grade --spec part.yaml --answer "TEXT" [--json]
    manage.py grade SLUG --part PART --scratchpad FILE [--given PART=VALUE ...] [--json]

A bank question is read from its file (no database needed), its variant drawn from the
seed, with any `--choice NAME=VALUE` overriding that parameter's drawn choice (as a
preview picking a variant does: `--choice model=llama31_8b --choice batch=16`); a spec
file is one part written with the question format's keys, graded with an empty context
plus the catalogue, so an author can try a part before writing the question.
`--file` reads the answer from a file: for a code part, the candidate's Python, run in
the sandbox exactly as the worker would (hidden tests from a fresh secret seed, or from
`--judge-seed` to replay one). The JSON carries the verdict's fields plus `verdict`, in
one vocabulary for every kind: correct, wrong, invalid or ungraded. A sandboxed kind's
own outcome (accepted, wrong_answer, runtime_error, too_slow, speed_not_scored, ...) is
the verdict's `mistake`.

`--scratchpad FILE` grades a numeric part's working with the answer (the file's answer
line is the answer when `--answer` is left out): the JSON's `steps` carry, per step, its
line, its value, and the intermediate (`matched`) or listed mistake (`mistake`) it
matched, or neither; `first_wrong_step` is the line where the working went wrong.
`--given PART=VALUE` is the candidate's answer to an earlier part, graded wrong, that
this part's reference names as `answers.PART` (repeatable), as the site passes the
candidate's latest answer to it; `carried` says whether credit was carried forward.
"""

import json
from pathlib import Path

import yaml
from django.core.management.base import BaseCommand, CommandError

import grading
from grading.kinds.base import GIVEN_KEY
from questions.catalogue import load_catalogue
from questions.loader import bank_files, load_file
from questions.schema import Question
from questions.variants import draw_variant


def find_bank_question(slug: str) -> Question:
    for path in bank_files():
        loaded = load_file(path)
        if isinstance(loaded.data, dict) and loaded.data.get("slug") == slug:
            if loaded.problems:
                raise CommandError("; ".join(str(problem) for problem in loaded.problems))
            return Question.from_data(loaded.data)
    raise CommandError(f"no question with slug {slug!r} in the bank")


class Command(BaseCommand):
    help = "Grade one answer to a bank question's part, or to a part spec in a file; print the verdict."

    def add_arguments(self, parser):
        parser.add_argument("slug", nargs="?", help="the bank question's slug")
        parser.add_argument("--part", help="the part id (bank questions)")
        parser.add_argument("--spec", type=Path, help="a YAML or JSON file holding one part spec")
        answer = parser.add_mutually_exclusive_group()
        answer.add_argument("--answer", help="the candidate's answer text")
        answer.add_argument("--file", type=Path, help="a file holding the answer (a code part's solution.py)")
        parser.add_argument("--seed", type=int, default=0, help="the variant seed (default 0)")
        parser.add_argument("--choice", action="append", default=[], metavar="NAME=VALUE",
                            help="bank questions: use this choice for one parameter (repeatable); "
                                 "the others come from --seed")
        parser.add_argument("--judge-seed", type=int, default=None,
                            help="code parts: the hidden tests' seed (default: a fresh secret one)")
        parser.add_argument("--scratchpad", type=Path, help="numeric parts: a file of working, a step a line")
        parser.add_argument("--given", action="append", default=[], metavar="PART=VALUE",
                            help="the candidate's (wrong) answer to an earlier part this part names as answers.PART")
        parser.add_argument("--json", dest="as_json", action="store_true", help="print the verdict as JSON")

    def handle(self, *args, slug=None, part=None, spec=None, answer=None, file=None, seed, judge_seed=None,
               as_json: bool, choice=(), scratchpad=None, given=(), **options):
        if file is not None:
            answer = _read_answer(file)
        working = _read_answer(scratchpad) if scratchpad is not None else ""
        if answer is None and not working:
            raise CommandError("give the answer: --answer TEXT, --file FILE or --scratchpad FILE")
        if given and not slug:
            raise CommandError("--given names an earlier part of a bank question; a spec file has one part")
        if bool(slug) == bool(spec):
            raise CommandError("give either a question SLUG (with --part) or --spec FILE")
        if spec and choice:
            raise CommandError("--choice picks a bank question's variant; a spec file has no parameters")
        if spec:
            part_raw, context = self._spec_part(spec)
        else:
            if not part:
                raise CommandError("--part is required with a question slug")
            question = find_bank_question(slug)
            try:
                part_raw = question.part(part).raw
            except KeyError:
                ids = ", ".join(p.id for p in question.parts)
                raise CommandError(f"{slug} has no part {part!r} (parts: {ids})") from None
            context = draw_variant(question, seed, choices=parse_choices(question, choice)).context
            if given:
                context = {**context, GIVEN_KEY: parse_given(question, part, given)}
        if judge_seed is not None:
            context = {**context, "judge_seed": judge_seed}
        try:
            verdict = grading.grade(part_raw, answer or "", context, scratchpad=working)
        except grading.SpecError as error:
            raise CommandError(f"the part spec is invalid: {error}") from None
        self._print({**verdict.to_dict(), "verdict": verdict_word(verdict)}, as_json=as_json)

    def _spec_part(self, path: Path):
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            raw = yaml.safe_load(path.read_text())  # JSON is YAML too
        except yaml.YAMLError as error:
            raise CommandError(f"{path}: not YAML or JSON: {error}") from None
        if not isinstance(raw, dict):
            raise CommandError(f"{path}: a part spec is a mapping of keys (kind, answer, unit, ...)")
        raw.setdefault("id", "spec")
        return raw, draw_variant(Question.from_data(_wrapper(raw)), 0, catalogue=load_catalogue()).context

    def _print(self, verdict: dict, *, as_json: bool):
        if as_json:
            self.stdout.write(json.dumps(verdict, indent=2, ensure_ascii=False))
            return
        for key in ("verdict", "valid", "correct", "score", "interpreted", "feedback", "mistake", "expected"):
            self.stdout.write(f"{key:>12}: {verdict.get(key)}")
        for step in verdict.get("steps") or ():
            found = step["matched"] or step["mistake"] or step["error"] or "matches nothing expected"
            mark = " <- first wrong step" if step["line"] == verdict.get("first_wrong_step") else ""
            self.stdout.write(f"  line {step['line']:>2}: {step['name'] or '-'} = {step['text']} -> "
                              f"{step['value'] or '?'} ({found}){mark}")
        if verdict.get("carried"):
            self.stdout.write(f"{'carried':>12}: {verdict['carried']}")


def parse_choices(question: Question, pairs) -> dict:
    """`NAME=VALUE` texts as a variant's choices: each NAME a parameter of the question and
    each VALUE one of its choices, matched by its text (`llama31_8b`, `16`, `0.5 ms`)."""
    params = {param.name: param for param in question.params}
    choices = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        name, value = name.strip(), value.strip()
        if not equals or not name:
            raise CommandError(f"--choice {pair!r}: write NAME=VALUE, such as model=llama31_8b")
        if name not in params:
            raise CommandError(f"--choice {pair!r}: {question.slug} has no parameter {name!r} "
                               f"(parameters: {', '.join(params) or 'none'})")
        matching = [option for option in params[name].choices if str(option) == value]
        if not matching:
            options = ", ".join(str(option) for option in params[name].choices)
            raise CommandError(f"--choice {pair!r}: {value!r} is not a choice of {name} "
                               f"(choices: {options})")
        choices[name] = matching[0]
    return choices


def parse_given(question: Question, part_id: str, pairs) -> dict:
    """`PART=VALUE` texts as the candidate's answers to earlier parts ({part_id:
    GivenAnswer}), each read as that part reads an answer."""
    given = {}
    for pair in pairs:
        earlier_id, equals, value = (piece.strip() for piece in pair.partition("="))
        if not equals or not earlier_id:
            raise CommandError(f"--given {pair!r}: write PART=VALUE, such as kv_token_gpu=320 KiB/token")
        try:
            earlier = question.part(earlier_id)
        except KeyError:
            raise CommandError(f"--given {pair!r}: {question.slug} has no part {earlier_id!r}") from None
        kind = grading.get_kind(earlier.kind)
        if earlier_id not in kind_earlier_parts(question, part_id):
            raise CommandError(f"--given {pair!r}: part {part_id!r} does not name answers.{earlier_id}")
        reading = kind.given_answer(kind.load_spec(earlier.raw), value)
        if reading is None:
            raise CommandError(f"--given {pair!r}: {value!r} does not read as an answer to {earlier_id}")
        given[earlier_id] = reading
    return given


def kind_earlier_parts(question: Question, part_id: str) -> tuple[str, ...]:
    part = question.part(part_id)
    kind = grading.get_kind(part.kind)
    return kind.earlier_parts(kind.load_spec(part.raw))


def _read_answer(path: Path) -> str:
    if not path.is_file():
        raise CommandError(f"{path}: no such file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not UTF-8 text") from None


def _wrapper(part_raw: dict) -> dict:
    """A minimal question around a lone part, so the spec sees the same context a
    question without params would (the catalogue's sections)."""
    return {
        "slug": "spec", "seed": 1, "title": "spec", "topic": "roofline", "difficulty": 1,
        "summary": "", "statement": "", "solution": "", "parts": [part_raw],
    }


def verdict_word(verdict) -> str:
    """The verdict in the words every kind shares: invalid, correct, wrong or ungraded.
    (Code and kernel parts used to print their own outcome names here, two vocabularies
    for one field; those names stay in ``mistake``.)"""
    if not verdict.valid:
        return "invalid"
    return {True: "correct", False: "wrong", None: "ungraded"}[verdict.correct]
