"""Where the read-only shared data lives: ``shared/`` beside the repository (``/work/main`` -> ``/work/shared``) or
beside the folder of worktrees that holds it (``/work/wt/answers`` -> ``/work/shared``); and the importer runs the
answer tests share."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = next((p / "shared" for p in (REPO_ROOT.parent, REPO_ROOT.parent.parent) if (p / "shared").is_dir()),
              REPO_ROOT.parent / "shared")  # the same rule as tests/conftest.py
RAG_IFEVAL = SHARED / "data" / "rag-ifeval"


def import_dataset(*args: str):
    """Run ``ragretrieval import-dataset ARGS`` (it must succeed); (result, the ``skipped:`` lines it printed)."""
    from click.testing import CliRunner

    from ragretrieval.cli import main

    result = CliRunner().invoke(main, ["dataset", "import", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result, [line for line in result.stderr.splitlines() if line.startswith("skipped: ")]
