"""The embedding cache: nothing is embedded twice, finished batches survive a crash, the key follows the model.

`CharacterEmbedder` is a real embedder (hashed character bigrams, L2-normalised) that implements the `Embedder`
protocol and counts what it embeds; it stands in for a slow neural model, not for any of our code.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from ragretrieval.data.chunking import ChunkPolicy, chunk_corpus
from ragretrieval.data.corpus import load_corpus
from ragretrieval.embedders import (
    Embedder,
    EmbeddingCache,
    SentenceTransformerEmbedder,
    default_cache_dir,
    embed_cached,
)
from ragretrieval.embedders.base import Symmetric
from ragretrieval.work.progress import RecordingProgress


class CharacterEmbedder(Symmetric):
    """Hashed character unigrams and bigrams in `dim` buckets, unit length."""

    def __init__(self, dim: int = 64, salt: str = ""):
        self.dim, self.salt = dim, salt
        self.identity = f"test-characters:dim={dim}:salt={salt}:normalize=True"
        self.batches: list[int] = []

    def _bucket(self, gram: str) -> int:
        return int.from_bytes(hashlib.blake2b((self.salt + gram).encode(), digest_size=4).digest(), "little") % self.dim

    def embed(self, texts):
        self.batches.append(len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for gram in [*text, *(text[i:i + 2] for i in range(len(text) - 1))]:
                out[row, self._bucket(gram)] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    @property
    def embedded(self) -> int:
        return sum(self.batches)


def evaluate_through(dataset_dir, cache, store: str, search_concurrency: int | None = None, **options):
    """`evaluate` of the dataset by the dense retriever over `store` with its `options`, embedding with
    `CharacterEmbedder` through `cache` (the stores' and the search timing's pipeline tests)."""
    from ragretrieval.data.dataset import load_dataset
    from ragretrieval.evaluation.pipeline import evaluate
    from ragretrieval.evaluation.report import EvalConfig
    from ragretrieval.retrieval import DenseRetriever

    timing = {} if search_concurrency is None else {"search_concurrency": search_concurrency}
    config = EvalConfig(model="test-characters", store=store, store_options=options, **timing)
    retriever = DenseRetriever(CharacterEmbedder(dim=256), cache, store, options, progress=False)
    return evaluate(load_dataset(dataset_dir), config, progress=False, retriever=retriever)


class FailsOnThirdBatch(CharacterEmbedder):
    def embed(self, texts):
        if len(self.batches) == 2:
            raise RuntimeError("out of memory in batch 3")
        return super().embed(texts)


TEXTS = [f"第{i}段：红烧肉要先焯水，再炒糖色。" for i in range(20)]


def test_character_embedder_implements_the_protocol():
    assert isinstance(CharacterEmbedder(), Embedder)


def test_second_call_embeds_nothing(tmp_path):
    cache, embedder = EmbeddingCache(tmp_path), CharacterEmbedder()
    first, made = embed_cached(embedder, TEXTS, cache, batch_size=8, progress=False)
    assert made == 20 and embedder.batches == [8, 8, 4]
    assert first.shape == (20, 64) and first.dtype == np.float32
    second, made_again = embed_cached(embedder, TEXTS, cache, batch_size=8, progress=False)
    assert made_again == 0 and embedder.embedded == 20
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(np.linalg.norm(second, axis=1), 1.0, rtol=1e-6)


def test_duplicates_embed_once_and_rows_follow_the_input(tmp_path):
    embedder = CharacterEmbedder()
    vectors, made = embed_cached(embedder, ["甲", "乙", "甲"], EmbeddingCache(tmp_path), progress=False)
    assert made == 2 and embedder.embedded == 2
    np.testing.assert_array_equal(vectors[0], vectors[2])
    assert not np.array_equal(vectors[0], vectors[1])


def test_a_new_connection_reads_what_another_wrote(tmp_path):
    embedder = CharacterEmbedder()
    embed_cached(embedder, TEXTS, EmbeddingCache(tmp_path), progress=False)
    reopened = EmbeddingCache(tmp_path)
    assert reopened.count(embedder.identity) == 20 and reopened.count() == 20
    _, made = embed_cached(CharacterEmbedder(), TEXTS, reopened, progress=False)
    assert made == 0


def test_rechunking_embeds_only_the_new_chunk_texts(tmp_path, demo_corpus):
    documents = load_corpus(demo_corpus).documents
    cache, embedder = EmbeddingCache(tmp_path), CharacterEmbedder()
    old = [c.text for c in chunk_corpus(documents, ChunkPolicy(300, 50))]
    _, made = embed_cached(embedder, old, cache, progress=False)
    assert made == len(set(old))
    new = [c.text for c in chunk_corpus(documents, ChunkPolicy(250, 50))]
    expected = len(set(new) - set(old))
    assert 0 < expected < len(set(new))  # sections shorter than both sizes give the same chunks
    _, made = embed_cached(embedder, new, cache, progress=False)
    assert made == expected
    assert cache.count(embedder.identity) == len(set(old) | set(new))


def test_an_interrupted_run_keeps_the_finished_batches(tmp_path):
    cache = EmbeddingCache(tmp_path)
    failing = FailsOnThirdBatch()
    with pytest.raises(RuntimeError, match="out of memory in batch 3"):
        embed_cached(failing, TEXTS, cache, batch_size=6, progress=False)
    assert failing.batches == [6, 6]
    assert EmbeddingCache(tmp_path).count(failing.identity) == 12
    resumed = CharacterEmbedder()
    vectors, made = embed_cached(resumed, TEXTS, cache, batch_size=6, progress=False)
    assert made == 8 and resumed.batches == [6, 2]
    np.testing.assert_array_equal(vectors, CharacterEmbedder().embed(TEXTS))


KILLED_RUN = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[2])
    from test_embedding_cache import CharacterEmbedder
    from ragretrieval.embedders import EmbeddingCache, embed_cached

    class Slow(CharacterEmbedder):
        def embed(self, texts):
            time.sleep(0.1)  # a model at work: the parent kills the process while it embeds
            return super().embed(texts)

    class Reported:  # prints what the progress bar would show: texts committed so far
        done = 0
        def stage(self, *args, **kwargs): pass
        def note(self, message): pass
        def advance(self, n=1, status=None):
            Reported.done += n
            print(Reported.done, flush=True)

    texts = [f"text {i}" for i in range(int(sys.argv[3]))]
    embed_cached(Slow(), texts, EmbeddingCache(sys.argv[1]), batch_size=5, progress=Reported())
    time.sleep(60)  # not reached in the test: killed first
""")


def test_a_process_killed_with_sigkill_keeps_every_batch_it_reported_finished(tmp_path):
    """SIGKILL from outside, while the model embeds and the writer thread commits: every batch the progress
    counted is in the cache, the database is whole, and the next run embeds exactly the rest."""
    here, total = os.path.dirname(__file__), 200
    child = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(tmp_path), here, str(total)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reported = 0
    try:
        for line in child.stdout:
            reported = int(line)
            if reported >= 30:
                break
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL, child.stderr.read()
    assert 30 <= reported < total
    cache = EmbeddingCache(tmp_path)
    identity = CharacterEmbedder().identity
    kept = cache.count(identity)
    assert reported <= kept < total
    assert cache._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    texts = [f"text {i}" for i in range(total)]
    vectors, made = embed_cached(CharacterEmbedder(), texts, cache, batch_size=5, progress=False)
    assert made == total - kept
    np.testing.assert_array_equal(vectors, CharacterEmbedder().embed(texts))


class WaitsForTheNextBatch(EmbeddingCache):
    """A cache whose first commit cannot end until the model has started the next batch: it finishes only when
    commits and embedding overlap (one after the other, it would wait out its timeout)."""

    def __init__(self, folder, next_batch_started: threading.Event):
        super().__init__(folder)
        self.next_batch_started, self.overlapped = next_batch_started, []

    def put(self, model, keys, vectors):
        if len(self.overlapped) < 3:  # the fourth and last batch has no next one
            self.overlapped.append(self.next_batch_started.wait(timeout=20))
            self.next_batch_started.clear()
        super().put(model, keys, vectors)


class SignalsEachBatch(CharacterEmbedder):
    def __init__(self, started: threading.Event):
        super().__init__()
        self.started = started

    def embed(self, texts):
        if self.batches:
            self.started.set()
        return super().embed(texts)


def test_commits_overlap_the_next_batch_and_all_land_before_the_call_returns(tmp_path):
    started = threading.Event()
    cache = WaitsForTheNextBatch(tmp_path, started)
    vectors, made = embed_cached(SignalsEachBatch(started), TEXTS, cache, batch_size=5, progress=False)
    assert made == 20 and cache.overlapped == [True, True, True]
    assert EmbeddingCache(tmp_path).count(CharacterEmbedder().identity) == 20
    np.testing.assert_array_equal(vectors, CharacterEmbedder().embed(TEXTS))


class FullAfterFirstBatch(EmbeddingCache):
    def put(self, model, keys, vectors):
        if self.count(model):
            raise OSError(28, "No space left on device")
        super().put(model, keys, vectors)


def test_a_failed_commit_stops_the_run_with_its_error_and_keeps_what_was_committed(tmp_path):
    cache = FullAfterFirstBatch(tmp_path)
    with pytest.raises(OSError, match="No space left"):
        embed_cached(CharacterEmbedder(), TEXTS, cache, batch_size=5, progress=False)
    assert EmbeddingCache(tmp_path).count(CharacterEmbedder().identity) == 5


def test_progress_counts_committed_texts_only(tmp_path):
    progress = RecordingProgress()
    embed_cached(CharacterEmbedder(), TEXTS, EmbeddingCache(tmp_path), batch_size=6, progress=progress)
    assert progress.stages == [["embedding", 20, 20]]


def test_the_cache_key_is_the_model_identity(tmp_path):
    cache = EmbeddingCache(tmp_path)
    embed_cached(CharacterEmbedder(salt="a"), TEXTS, cache, progress=False)
    other = CharacterEmbedder(salt="b")
    _, made = embed_cached(other, TEXTS, cache, progress=False)
    assert made == 20
    assert cache.count() == 40


def test_sentence_transformer_identity_follows_weights_name_and_normalisation(tmp_path):
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "config.json").write_text('{"hidden_size": 8}', encoding="utf-8")
    (model / "model.safetensors").write_bytes(b"weights v1")
    (model / "README.md").write_text("a model card is not part of the identity", encoding="utf-8")
    first = SentenceTransformerEmbedder(str(model)).identity
    assert first.startswith(f"sentence-transformers:{model}@") and first.endswith(":normalize=True")
    assert SentenceTransformerEmbedder(str(model)).identity == first
    (model / "README.md").write_text("edited card", encoding="utf-8")
    assert SentenceTransformerEmbedder(str(model)).identity == first
    assert SentenceTransformerEmbedder(str(model), normalize=False).identity == first.replace(
        "normalize=True", "normalize=False")
    (model / "model.safetensors").write_bytes(b"weights v2")
    assert SentenceTransformerEmbedder(str(model)).identity != first


def test_default_model_identity_names_m3e_small_and_its_weights():
    identity = SentenceTransformerEmbedder("m3e-small").identity
    assert identity == SentenceTransformerEmbedder("default").identity
    prefix, _, rest = identity.partition("@")
    assert prefix == "sentence-transformers:m3e-small"
    weights_hash, _, normalisation = rest.partition(":")
    assert len(weights_hash) == 16 and normalisation == "normalize=True"


def test_cache_folder_comes_from_the_environment(monkeypatch, tmp_path, embedding_cache_dir):
    assert default_cache_dir() == embedding_cache_dir
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert EmbeddingCache().path == tmp_path / "elsewhere" / "embeddings.sqlite"
    monkeypatch.delenv("RAGRETRIEVAL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "ragretrieval"
