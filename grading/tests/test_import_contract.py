"""The import contract: which layers may import which, and no cycles.

Layers, bottom to top (README, "Layout"):
- engine: the pure grading library (``grading`` without its Django shell: expressions,
  units, templating, variants, verdict, kinds, judge, sandbox) and ``gpu_runner``'s
  device side. It imports no Django, Celery, bank, attempts or pages module.
- bank: ``questions``. It may import the engine, never the attempts or the pages.
- attempts: the grading shell (``grading.models``, ``services``, ``tasks``, ``health``,
  ``supervisor``, ``signals``, management commands) and ``gpu_runner.routing``. It may
  import the engine and the bank, never the pages.
- pages: ``trainer``. It may import everything below.
Tools (``gpu_runner.device_check``, a command line) may import any layer but pages.

Function-level imports count like any other: a function-level import that dodges a
cycle hides the cycle, it does not remove it.
"""

import ast
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("grading", "questions", "trainer", "gpu_runner")
GRADING_SHELL = ("grading.models", "grading.services", "grading.tasks", "grading.health", "grading.supervisor",
                 "grading.signals", "grading.apps", "grading.admin", "grading.management")
TOOLS = ("gpu_runner.device_check",)
LAYER_ORDER = {"engine": 0, "bank": 1, "attempts": 2, "pages": 3}
FRAMEWORKS = ("django", "celery", "kombu", "django_htmx", "template_partials")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if {"tests", "migrations", "bank"} & set(parts):
                continue
            name = ".".join(parts).removesuffix(".__init__")
            found[name] = path
    return found


MODULES = _modules()


def _within(name: str, prefixes) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def layer_of(name: str) -> str:
    if _within(name, TOOLS):
        return "tools"
    if name.startswith("trainer"):
        return "pages"
    if name.startswith("questions"):
        return "bank"
    if _within(name, GRADING_SHELL) or name == "gpu_runner.routing":
        return "attempts"
    return "engine"


def _project_module(imported: str) -> str | None:
    while imported and imported not in MODULES:
        imported = imported.rpartition(".")[0]
    return imported or None


def _imports(path: Path):
    """(imported dotted name, line) for every absolute import in the file, at any depth."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, node.lineno
            for alias in node.names:
                yield f"{node.module}.{alias.name}", node.lineno


def _graph():
    edges = defaultdict(set)
    for name, path in MODULES.items():
        for imported, _ in _imports(path):
            target = _project_module(imported)
            if target and target != name:
                edges[name].add(target)
    return edges


def test_each_layer_imports_only_layers_below_it():
    wrong = []
    for name, path in sorted(MODULES.items()):
        layer = layer_of(name)
        for imported, line in _imports(path):
            top = imported.split(".")[0]
            if layer == "engine" and top in FRAMEWORKS:
                wrong.append(f"{name}:{line} (engine) imports {imported}")
            target = _project_module(imported)
            if target is None or target == name:
                continue
            target_layer = layer_of(target)
            if layer == "tools":
                if target_layer == "pages":
                    wrong.append(f"{name}:{line} (tool) imports {target} (pages)")
                continue
            if target_layer == "tools" or LAYER_ORDER[target_layer] > LAYER_ORDER[layer]:
                wrong.append(f"{name}:{line} ({layer}) imports {target} ({target_layer})")
    assert not wrong, "\n".join(wrong)


def _cycles(edges) -> list[list[str]]:
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(MODULES):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles_between_modules():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(cycle) for cycle in cycles)


@pytest.mark.parametrize("name", ["grading.expressions", "grading.kinds.numeric", "grading.kinds.code",
                                  "grading.kinds.kernel"])
def test_the_engine_imports_without_django(name):
    import subprocess

    code = (f"import sys, {name}; "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'celery', 'questions', 'trainer')); "
            "assert not bad, bad")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-2000:]


# Function-level imports of project modules that remain, each for a reason other than a
# cycle. A new one fails here: move it to the top of its module, or add it with its reason.
FUNCTION_LEVEL_ALLOWED = {
    ("trainer.apps", "grading.signals"): "AppConfig.ready() wiring: models are not ready at import time",
    ("trainer.apps", "trainer.roles"): "AppConfig.ready() wiring",
    ("trainer.apps", "trainer.services"): "a signal receiver defined in apps.py, importing models",
    ("trainer.interviews.apps", "grading.signals"): "AppConfig.ready() wiring",
    ("trainer.interviews.apps", "trainer.interviews.services"): "a signal receiver importing models",
}


def test_no_function_level_import_is_left_without_a_reason():
    found = set()
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and node.col_offset > 0:
                imported = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                target = _project_module(imported or "")
                if target and target != name:
                    found.add((name, target))
    unexplained = sorted(found - set(FUNCTION_LEVEL_ALLOWED))
    stale = sorted(set(FUNCTION_LEVEL_ALLOWED) - found)
    assert not unexplained, f"function-level imports without a reason: {unexplained}"
    assert not stale, f"allowed but gone (remove them from the list): {stale}"
