"""Fixtures for the runs history: histories on both back ends (PostgreSQL from tests/conftest.py), small real reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragretrieval.data.dataset import load_dataset
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.runs import RunHistory


@pytest.fixture(autouse=True)
def _isolated_history(tmp_path, monkeypatch):
    """No test reads or writes ./.ragretrieval: the default history is a tmp file."""
    monkeypatch.setenv("RAGRETRIEVAL_RUNS_URL", str(tmp_path / "default-runs.sqlite"))


@pytest.fixture(scope="session")
def dataset_dir(demo_dataset) -> Path:
    return demo_dataset


@pytest.fixture(scope="session")
def bm25_reports(dataset_dir):
    """Two real reports (bm25, chunk sizes 300 and 500) on the demo dataset."""
    dataset = load_dataset(dataset_dir)
    return [evaluate(dataset, EvalConfig(retriever="bm25", model=None, chunk_size=size), progress=False)
            for size in (300, 500)]


@pytest.fixture
def history(history_url):
    with RunHistory(history_url) as opened:
        yield opened
