"""The house rules a reader relies on: rooms by layer at the package root, short modules, no import cycles between
modules or between rooms, and the 0.1 import paths still working (with a warning) for one release."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ragretrieval

PACKAGE = Path(ragretrieval.__file__).parent
GROUND_FLOOR = {"__init__.py", "__main__.py", "errors.py", "text.py"}  # at most two modules beside the entry points
MAX_LINES = 400


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def top_level_imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The ragretrieval modules `name` imports when it is imported (not inside functions or TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for inner in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(inner, ast.Import):
                targets |= {alias.name for alias in inner.names}
            elif isinstance(inner, ast.ImportFrom):
                base = inner.module or ""
                if inner.level:
                    anchor = package.split(".")[: len(package.split(".")) - inner.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets.add(base)
                targets |= {f"{base}.{alias.name}" for alias in inner.names}
    return {t for t in targets if t in known and t != name}


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    graph = {}
    for name, path in found.items():
        edges = top_level_imports(name, path, known)
        # importing a.b.c imports its packages a.b and a first, unless they are the importer's own (being imported)
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
        parents = {".".join(t.split(".")[:i]) for t in edges for i in range(2, t.count(".") + 1)}
        graph[name] = (edges | parents) - own
    return graph


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(node):
        state[node] = 1
        trail.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return trail[trail.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        trail.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_root_holds_rooms_and_at_most_two_ground_floor_modules():
    files = {p.name for p in PACKAGE.glob("*.py")}
    assert files == GROUND_FLOOR
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert rooms == {"io", "data", "embedders", "stores", "retrieval", "scoring", "evaluation", "analysis", "llm",
                     "answers", "runs", "server", "work", "testing", "cli", "api"}


def test_every_module_is_short():
    long = {name: n for name, path in modules().items()
            if (n := path.read_text(encoding="utf-8").count("\n")) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_no_import_cycle_between_modules():
    assert cycle_in(import_graph()) is None


def test_no_import_cycle_between_rooms():
    rooms: dict[str, set[str]] = {}
    for name, targets in import_graph().items():
        room = ".".join(name.split(".")[:2])
        rooms.setdefault(room, set()).update(".".join(t.split(".")[:2]) for t in targets)
    rooms = {room: targets - {room} for room, targets in rooms.items()}
    assert cycle_in(rooms) is None


def test_the_cycle_finder_finds_a_cycle():
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b"}, "b": set()}) is None


OLD_PATHS = {
    "ragretrieval.corpus": "ragretrieval.data.corpus",
    "ragretrieval.dataset": "ragretrieval.data.dataset",
    "ragretrieval.chunking": "ragretrieval.data.chunking",
    "ragretrieval.questions": "ragretrieval.data.filename_questions",
    "ragretrieval.evaluation": None,  # now a package: its old names are re-exported
    "ragretrieval.report": "ragretrieval.evaluation.report",
    "ragretrieval.sweep": "ragretrieval.runs.sweep",
    "ragretrieval.stats": "ragretrieval.analysis.stats",
    "ragretrieval.compare": "ragretrieval.analysis.compare",
    "ragretrieval.html_report": "ragretrieval.analysis.html",
    "ragretrieval.atomic": "ragretrieval.io.atomic",
    "ragretrieval.external.run_file": "ragretrieval.retrieval.external.run_file",
    "ragretrieval.external.agent_jsonl": "ragretrieval.data.importers.agent_jsonl",
    "ragretrieval.executors": "ragretrieval.embedders.executors",
    "ragretrieval.llm.answers": "ragretrieval.llm.replies",
}


@pytest.mark.parametrize("old, new", [(o, n) for o, n in OLD_PATHS.items() if n])
def test_old_import_paths_still_work_with_a_warning(old, new):
    code = (f"import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
            f"try:\n    import {old}\nexcept DeprecationWarning as w:\n    print('warned:', w)\n"
            f"warnings.simplefilter('ignore')\nimport importlib\n"
            f"print(importlib.import_module({old!r}) is importlib.import_module({new!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    warned, same = done.stdout.splitlines()
    assert warned.startswith("warned:")  # (for a.b.c, the first warning may be a.b's)
    assert same == "True"


def test_the_old_evaluation_names_still_import():
    with pytest.warns(DeprecationWarning):
        from ragretrieval.evaluation import evaluate  # noqa: F401  (0.1: ragretrieval.evaluation.evaluate)
    assert importlib.import_module("ragretrieval.evaluation").evaluate is \
        importlib.import_module("ragretrieval.evaluation.pipeline").evaluate


def test_no_test_imports_the_tests_folder_as_a_package():
    """A test-extra package (ppi-python) installs a top-level ``tests`` package, which shadows our folder (it has no
    ``__init__.py``): ``from tests.conftest import X`` then fails to collect. Fixtures and relative paths instead."""
    tests = Path(__file__).parent
    offenders = [str(path.relative_to(tests)) for path in tests.rglob("*.py")
                 if re.search(r"^\s*(from|import)\s+tests\b", path.read_text(encoding="utf-8"), re.M)]
    assert offenders == []
