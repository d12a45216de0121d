"""The answers pages' worked examples (docs/answers/*.md: nugget evaluation, calibrated judge scores, failure classes,
judge noise, cost before the bill) run as written and print what the page shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # the checkout under test, also where the examples import it from
PAGES = sorted((ROOT / "docs" / "answers").glob("*.md"))


def example(name: str) -> tuple[str, str]:
    """The Python block after ``<!-- example: name -->`` and the text block after it (its output)."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        found = re.search(rf"<!-- example: {name} -->\n```python\n(.*?)\n```\n\n```text\n(.*?)\n```", text, re.S)
        if found:
            return found.group(1), found.group(2)
    raise AssertionError(f"no example {name!r} in docs/answers/")


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
@pytest.mark.parametrize("name", ["nuggets", "calibration", "failure-classes", "judge-noise", "cost"])
def test_the_worked_example_prints_what_the_docs_show(name, tmp_path, monkeypatch):
    code, shown = example(name)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == shown.strip()
    if name == "calibration":
        from click.testing import CliRunner

        from ragretrieval.cli import main

        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(main, ["judge", "calibrate", "--predictions", "predictions.jsonl", "--labels",
                                           "labels.jsonl"])
        text = (ROOT / "docs" / "answers" / "calibrate.md").read_text(encoding="utf-8")
        expected = re.search(r"```text\n(values of predictions\.jsonl.*?)\n```", text, re.S).group(1)
        assert result.exit_code == 0 and result.output.strip() == expected.strip()
