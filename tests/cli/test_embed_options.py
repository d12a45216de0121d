"""``--embed-batch-size`` and ``--embed-dtype`` refuse bad values in one line naming the flag (exit 2)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main


@pytest.mark.parametrize("args, says", [
    (["--embed-batch-size", "0"], "--embed-batch-size: must be auto or a whole number from 1 to 4096, got '0'"),
    (["--embed-batch-size", "-1"], "--embed-batch-size: must be auto or a whole number"),
    (["--embed-batch-size", ""], "--embed-batch-size: must be auto or a whole number"),
    (["--embed-batch-size", "99999999999"], "--embed-batch-size: must be auto or a whole number"),
    (["--embed-batch-size", "eight"], "--embed-batch-size: must be auto or a whole number"),
    (["--embed-dtype", "half"], "Invalid value for '--embed-dtype'"),
    (["--embed-dtype", ""], "Invalid value for '--embed-dtype'"),
    (["--model", "hashing-64", "--embed-dtype", "float16"], "hashing-64: dtype float16 is for sentence-transformers"),
    (["--model", "m3e-small@int8", "--embed-dtype", "bfloat16"], "dtype bfloat16 cannot be used"),
    (["--model", "m3e-small@int8", "--embed-batch-size", "4"], "batch_size 4 cannot be used"),
])
def test_bad_embedding_options_are_usage_errors(demo_dataset, args, says):
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), *args, "--no-save", "--no-progress"])
    assert result.exit_code == 2, result.output
    assert says in result.output and "Traceback" not in result.output
