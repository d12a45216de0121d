"""The answers pages that open with a command-line example (docs/answers/check.md, reports.md, import.md) run it
as written, after `make demo`: each command of the block in a folder laid out like the repository."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main

ROOT = Path(__file__).resolve().parents[2]


def first_example(page: str) -> list[list[str]]:
    """The arguments after `ragretrieval` of each command in the page's first ``bash`` block."""
    text = (ROOT / "docs" / "answers" / page).read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)\n```", text, re.S).group(1)
    commands = [shlex.split(line) for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    assert all(words[0] == "ragretrieval" for words in commands)
    return [words[1:] for words in commands]


@pytest.mark.parametrize("page", ["check.md", "reports.md", "import.md"])
def test_the_pages_first_example_runs(page, demo_dataset, tmp_path, monkeypatch):
    shutil.copytree(demo_dataset, tmp_path / ".demo" / "dataset")  # what `make demo` builds
    (tmp_path / "datasets").symlink_to(ROOT / "datasets")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGRETRIEVAL_RUNS_URL", str(tmp_path / "runs.sqlite"))
    for arguments in first_example(page):
        result = CliRunner().invoke(main, arguments)
        assert result.exit_code == 0, f"{arguments}: {result.output}"
