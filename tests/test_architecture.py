"""The house rules a reader relies on: rooms by layer at the package root, short modules, no import cycles between
modules or between rooms (imports inside functions count: they are dependencies all the same), and the 0.1 import
paths gone (removed in 0.3)."""

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


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of the package that `name` imports anywhere: at the top, in an ``if`` or ``try``, and inside
    functions and methods (an import there is a dependency all the same, made when the function first runs). Only
    ``if TYPE_CHECKING:`` blocks are left out: nothing runs them."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets.add(base)
            targets |= {f"{base}.{alias.name}" for alias in node.names}
        pending.extend(ast.iter_child_nodes(node))
    return {t for t in targets if t in known and t != name}


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    found = modules(package)
    known = set(found)
    graph = {}
    for name, path in found.items():
        edges = imports_of(name, path, known)
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


def test_the_import_reader_sees_imports_inside_functions_but_not_type_checking_ones(tmp_path):
    """Two modules that import each other, one of them only inside a function, are a cycle; an import under
    ``if TYPE_CHECKING:`` is none."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n\nVALUE = 1\n")
    (package / "b.py").write_text("def late():\n    if True:\n        from .a import VALUE\n\n        return VALUE\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .d import X\n"
                                  "else:\n    import os\n")
    (package / "d.py").write_text("from .c import os\n\n\nclass X:\n    def m(self):\n        import pkg.b\n")
    graph = import_graph(package)
    assert graph["pkg.b"] == {"pkg.a"} and graph["pkg.c"] == set() and graph["pkg.d"] == {"pkg.b", "pkg.c"}
    assert cycle_in(graph) == ["pkg.a", "pkg.b", "pkg.a"]
    (package / "b.py").write_text("def late():\n    return 1\n")
    assert cycle_in(import_graph(package)) is None


@pytest.mark.parametrize("old", ["ragretrieval.corpus", "ragretrieval.sweep", "ragretrieval.compare",
                                 "ragretrieval.external.run_file", "ragretrieval.llm.answers"])
def test_the_0_1_module_paths_are_gone(old):
    """Removed in 0.3 after warning through 0.2 (CHANGELOG.md): an old path is an ordinary missing module, and
    ``rr.sweep`` is the face's function, not the 0.1 module."""
    code = (f"import importlib, ragretrieval as rr\n"
            f"try:\n    importlib.import_module({old!r})\nexcept ModuleNotFoundError as e:\n    print('missing:', e.name)\n"
            f"print(callable(rr.sweep) and rr.sweep.__module__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    missing, face = done.stdout.splitlines()
    assert missing.startswith("missing: ragretrieval.") and face == "ragretrieval.api.sweeps"


def test_the_old_evaluation_names_are_gone():
    evaluation = importlib.import_module("ragretrieval.evaluation")
    with pytest.raises(AttributeError):
        evaluation.evaluate  # noqa: B018  (0.1: ragretrieval.evaluation.evaluate, now .pipeline.evaluate)


def test_no_test_imports_the_tests_folder_as_a_package():
    """A test-extra package (ppi-python) installs a top-level ``tests`` package, which shadows our folder (it has no
    ``__init__.py``): ``from tests.conftest import X`` then fails to collect. Fixtures and relative paths instead."""
    tests = Path(__file__).parent
    offenders = [str(path.relative_to(tests)) for path in tests.rglob("*.py")
                 if re.search(r"^\s*(from|import)\s+tests\b", path.read_text(encoding="utf-8"), re.M)]
    assert offenders == []


def test_classes_that_shared_a_name_have_their_own_and_the_old_one_still_imports():
    """Two classes of one name in two rooms read as one thing; each has its own name now, and the 0.2 name still
    imports where it was public."""
    from ragretrieval.answers import prompt
    from ragretrieval.llm.judge import pooling
    from ragretrieval.server import corpora
    from ragretrieval.server.jobs import contract, engine

    assert engine.QuestionResult is contract.QuestionResult is contract.ItemResult
    assert pooling.JudgeError is pooling.PoolingError and prompt.PromptError is prompt.AnswerPromptError
    assert corpora.ServedCorpus.__name__ == "ServedCorpus"
    defined: dict[str, list[str]] = {}
    for name, path in modules().items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                defined.setdefault(node.name, []).append(name)
    for shared in ("QuestionResult", "JudgeError", "PromptError", "Corpus"):
        assert len(defined.get(shared, [])) == 1, (shared, defined.get(shared))
