"""The eight answer checks are declared once, in the checks' registry (work/plugins.py). ragretrieval's own
distribution also publishes them as entry points (pyproject.toml: the group exists in every installation), and the
code that runs them (answers/checks/registry.py) takes them from the registry: this test fails when pyproject.toml
and the registry disagree on a name or on where its code is."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ragretrieval.answers.checks import CHECKS
from ragretrieval.work.plugins import CHECKS as REGISTRY

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def published_checks(text: str) -> dict[str, str]:
    return tomllib.loads(text)["project"]["entry-points"][REGISTRY.group]


def disagreements(published: dict[str, str], declared: dict[str, str]) -> list[str]:
    """One line per name that pyproject.toml and the registry do not give the same code."""
    return [f"{name}: pyproject.toml {published.get(name)!r}, work/plugins.py {declared.get(name)!r}"
            for name in sorted(set(published) | set(declared)) if published.get(name) != declared.get(name)]


def test_pyproject_publishes_exactly_the_registry_s_checks():
    declared = {entry.name: entry.target for entry in REGISTRY.built_in}
    assert len(declared) == 8
    assert disagreements(published_checks(PYPROJECT.read_text(encoding="utf-8")), declared) == []


def test_the_checks_that_run_are_the_registry_s():
    assert list(CHECKS) == [entry.name for entry in REGISTRY.built_in]
    assert all(CHECKS[entry.name] is entry.load() for entry in REGISTRY.built_in)


@pytest.mark.parametrize("published, line", [
    ({"include": "m:a"}, "exclude: pyproject.toml None"),  # a check only the registry declares
    ({"include": "m:a", "exclude": "m:b", "extra": "m:c"}, "extra: pyproject.toml 'm:c', work/plugins.py None"),
    ({"include": "m:a", "exclude": "m:other"}, "exclude: pyproject.toml 'm:other', work/plugins.py 'm:b'"),
])
def test_a_disagreement_is_named(published, line):
    [found] = disagreements(published, {"include": "m:a", "exclude": "m:b"})
    assert found.startswith(line)
