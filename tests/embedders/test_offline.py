"""``HF_HUB_OFFLINE`` is set around a model load from a folder only (embedders/offline.py): the process's
environment and huggingface_hub's offline constant are as they were once the load is done."""

from __future__ import annotations

import os
import threading

import huggingface_hub.constants as hub
import pytest

from ragretrieval.embedders.offline import hub_offline
from ragretrieval.embedders.sentence_transformer import SentenceTransformerEmbedder


@pytest.mark.parametrize("before", [None, "0", "1"])
def test_the_block_is_offline_and_what_was_there_comes_back(monkeypatch, before):
    if before is None:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    else:
        monkeypatch.setenv("HF_HUB_OFFLINE", before)
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", before == "1")
    environment = dict(os.environ)
    with hub_offline():
        assert os.environ["HF_HUB_OFFLINE"] == "1" and hub.HF_HUB_OFFLINE is True
    assert dict(os.environ) == environment
    assert hub.HF_HUB_OFFLINE is (before == "1")


def test_an_error_in_the_block_still_puts_the_environment_back(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", False)
    with pytest.raises(RuntimeError), hub_offline():
        raise RuntimeError("the load failed")
    assert "HF_HUB_OFFLINE" not in os.environ and hub.HF_HUB_OFFLINE is False


def test_blocks_in_two_threads_share_one_offline_period(monkeypatch):
    """The second thread leaves while the first is still loading: the first stays offline until it leaves."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", False)
    inside, leave = threading.Event(), threading.Event()
    seen = []

    def first():
        with hub_offline():
            inside.set()
            leave.wait(10)
            seen.append((os.environ.get("HF_HUB_OFFLINE"), hub.HF_HUB_OFFLINE))

    thread = threading.Thread(target=first)
    thread.start()
    inside.wait(10)
    with hub_offline():
        pass
    leave.set()
    thread.join(10)
    assert seen == [("1", True)]
    assert "HF_HUB_OFFLINE" not in os.environ and hub.HF_HUB_OFFLINE is False


@pytest.mark.model
def test_loading_a_model_from_its_folder_leaves_the_process_environment_unchanged(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", False)
    import sentence_transformers  # noqa: F401  torch sets a few variables of its own (KMP_*) when first imported

    environment = dict(os.environ)
    embedder = SentenceTransformerEmbedder("m3e-small")
    assert embedder._load() is not None
    assert dict(os.environ) == environment
    assert hub.HF_HUB_OFFLINE is False
