"""The importer runs the answer tests share (the shared data's folders are fixtures of tests/conftest.py)."""

from __future__ import annotations


def import_dataset(*args: str):
    """Run ``ragretrieval import-dataset ARGS`` (it must succeed); (result, the ``skipped:`` lines it printed)."""
    from click.testing import CliRunner

    from ragretrieval.cli import main

    result = CliRunner().invoke(main, ["dataset", "import", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result, [line for line in result.stderr.splitlines() if line.startswith("skipped: ")]
