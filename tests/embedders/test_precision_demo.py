"""`eval --embed-dtype bfloat16` with m3e-small on the demo corpus, from the command line: its own embedding identity,
and document recall within 0.02 of float32's on the CPU; `--embed-batch-size` changes no identity."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main

pytestmark = pytest.mark.model  # m3e-small, float32 and bfloat16


def evaluate(dataset, tmp_path, name, *flags) -> dict:
    out = tmp_path / f"{name}.json"
    result = CliRunner().invoke(main, ["eval", "--dataset", str(dataset), "--retriever", "dense", "--no-save",
                                       "--no-progress", "--out", str(out), *flags])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8"))


def test_bfloat16_has_its_own_identity_and_the_recall_of_float32(demo_dataset, tmp_path):
    fp32 = evaluate(demo_dataset, tmp_path, "fp32", "--embed-dtype", "float32")
    bf16 = evaluate(demo_dataset, tmp_path, "bf16", "--embed-dtype", "bfloat16")
    wide = evaluate(demo_dataset, tmp_path, "wide", "--embed-batch-size", "32")
    identity = {name: report["retriever"]["embedders"]["dense"] for name, report in
                (("fp32", fp32), ("bf16", bf16), ("wide", wide))}
    assert identity["bf16"] == identity["fp32"] + ":dtype=bfloat16"
    assert identity["wide"] == identity["fp32"]  # the batch size is no part of the identity
    assert bf16["retriever"]["details"]["embedding"]["dtype"] == "bfloat16"
    for metric in ("recall@5", "mrr@10", "recall@1"):
        assert abs(bf16["means"]["doc"][metric] - fp32["means"]["doc"][metric]) <= 0.02, metric
