"""A lab question's generator: trusted Python beside its YAML that makes the variant's data.

The generator file (`questions/bank/<topic>/<seed:03d>-<slug>.lab.py`, named by the
question's `generator:` key, relative to the bank) is reviewed code written by question
authors, like a code part's judge: it runs on the trusted side only, in the web and
worker processes, never in the sandbox. It defines

    def generate(variant: LabInput) -> LabOutput

which must be a pure function of its input: draw every random number from
`variant.rng` (seeded by the variant's seed and choices), read no clock, file or
environment. The same variant then yields the same artifacts byte for byte, which
`validate_questions` checks by generating twice. The output's `values` are what the
question's expressions read as `lab.<name>` (references, mistakes, templates, checks);
compute them from the generated data itself, so every number the grader expects is one
the candidate can find in the artifacts.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import random
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from grading.kinds.base import SpecError
from grading.variants import plain_value
from questions.labs.artifacts import ARTIFACT_TYPES, Artifact, filename
from questions.labs.display import RenderedArtifact, render_artifact
from questions.loader import generator_path

LAB_NAME = "lab"  # the context name the generated values live under
VALUE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class LabInput:
    """What a generator may read: the variant's `seed`, its parameter `choices` (plain
    JSON values, as drawn) and its evaluation `context` (params resolved to catalogue
    entries, derived values; read-only). `rng` is the only randomness to use."""

    seed: int
    choices: Mapping
    context: Mapping

    @property
    def rng(self) -> random.Random:
        """A fresh `random.Random` seeded by the seed and the choices (a new one on each
        access, so two reads do not share a stream by accident)."""
        key = json.dumps({"seed": int(self.seed), "choices": dict(self.choices)}, sort_keys=True, default=str)
        return random.Random(key)


@dataclass(frozen=True)
class LabOutput:
    """A generator's result: its artifacts, in the order the page shows them, and the
    values its answers are computed from (numbers, or quantity text such as
    `"412.5 ms"`, read as params are)."""

    artifacts: tuple[Artifact, ...]
    values: Mapping = field(default_factory=dict)

    def artifact(self, file_name: str) -> Artifact | None:
        for artifact in self.artifacts:
            if filename(artifact) == file_name:
                return artifact
        return None


_MODULES_LOCK = threading.Lock()
_MODULES: dict[tuple[str, int], tuple[object, str]] = {}


def load_generator(relative: str):
    """(the `generate` function, the file's sha256) for generator file `relative`.
    Modules are cached by path and modification time, so an edited generator reloads.
    Raises SpecError (key `generator`) when the file is missing or malformed."""
    try:
        path = generator_path(relative)
    except LookupError as error:
        raise SpecError(str(error), "generator") from None
    key = (str(path), path.stat().st_mtime_ns)
    with _MODULES_LOCK:
        cached = _MODULES.get(key)
    if cached is None:
        cached = (_import(path), hashlib.sha256(path.read_bytes()).hexdigest())
        with _MODULES_LOCK:
            _MODULES[key] = cached
    module, digest = cached
    generate = getattr(module, "generate", None)
    if not callable(generate):
        raise SpecError(f"{relative} defines no generate(variant) function", "generator")
    return generate, digest


def _import(path: Path):
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"trainer_lab_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise SpecError(f"{path.name} does not import: {type(error).__name__}: {error}", "generator") from error
    return module


def run_generator(relative: str, seed: int, choices: Mapping, context: Mapping) -> LabOutput:
    """Run the generator once, uncached, and check the shape of what it returns."""
    generate, _ = load_generator(relative)
    variant = LabInput(int(seed), MappingProxyType(dict(choices)), MappingProxyType(dict(context)))
    try:
        output = generate(variant)
    except SpecError:
        raise
    except Exception as error:
        raise SpecError(f"generate() fails: {type(error).__name__}: {error}", "generator") from error
    return _checked(output)


def _checked(output) -> LabOutput:
    if not isinstance(output, LabOutput):
        raise SpecError(f"generate() must return a LabOutput, not {type(output).__name__}", "generator")
    names = set()
    for artifact in output.artifacts:
        if not isinstance(artifact, ARTIFACT_TYPES):
            raise SpecError(f"artifact {artifact!r} is not a table, trace, event log or chart", "generator")
        if filename(artifact) in names:
            raise SpecError(f"two artifacts are called {filename(artifact)!r}", "generator")
        names.add(filename(artifact))
    for name, value in output.values.items():
        if not VALUE_NAME.match(str(name)):
            raise SpecError(f"value name {name!r} must be an identifier", "generator")
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise SpecError(f"value {name!r} must be a number or quantity text, not {value!r}", "generator")
    return LabOutput(tuple(output.artifacts), MappingProxyType(dict(output.values)))


def lab_values(output: LabOutput) -> dict:
    """The values as the expression context holds them under `lab`: numbers as they
    are, quantity text parsed (`"412.5 ms"` is a time)."""
    return {name: plain_value(value, label=f"generator value {name}") for name, value in output.values.items()}


class Lab:
    """One variant's generated data: the generator's `output`, its `values` as the
    context holds them, and (made on first use: grading never needs them) the artifacts
    as the page shows them."""

    def __init__(self, output: LabOutput):
        self.output = output
        self.values = lab_values(output)

    @functools.cached_property
    def rendered(self) -> tuple[RenderedArtifact, ...]:
        return tuple(render_artifact(artifact) for artifact in self.output.artifacts)


# ---------------------------------------------------------------- the per-process cache

_CACHE: "OrderedDict[tuple, Lab]" = OrderedDict()
_CACHE_MAX = 256
_CACHE_LOCK = threading.Lock()


def cache_key(relative: str, digest: str, seed: int, choices: Mapping, question_raw: Mapping) -> tuple:
    """A lab's identity: the generator's bytes, the variant (seed and choices) and what
    of the YAML the generator can read (params and derived, through the context). A
    stored version's content hash and seed fix all of these but the generator file,
    which an edit can change under the same YAML; hence its digest."""
    variant = json.dumps(
        {"choices": dict(choices), "params": question_raw.get("params"), "derived": question_raw.get("derived")},
        sort_keys=True, default=str,
    )
    return (relative, digest, int(seed), hashlib.sha256(variant.encode()).hexdigest())


def cached_lab(relative: str, seed: int, choices: Mapping, context: Mapping, question_raw: Mapping) -> Lab:
    """The generator's output for this variant, made once per process: grading every
    answer and rendering every page of the variant rebuild its context, and generating
    a trace is far dearer than the rest of it."""
    _, digest = load_generator(relative)
    key = cache_key(relative, digest, seed, choices, question_raw)
    with _CACHE_LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    lab = Lab(run_generator(relative, seed, choices, context))
    with _CACHE_LOCK:
        _CACHE[key] = lab
        while len(_CACHE) > _CACHE_MAX:
            _CACHE.popitem(last=False)
    return lab
