"""`<model>@int8`: dynamic int8 quantisation of a sentence-transformers model, its own cache identity, the same
retrieval quality on the demo data, and a warm run that neither embeds nor loads the model."""

from __future__ import annotations

import numpy as np
import pytest

from ragretrieval.data.dataset import load_dataset
from ragretrieval.embedders import EmbedderError, EmbeddingCache, get_embedder
from ragretrieval.embedders.sentence_transformer import SentenceTransformerEmbedder
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.retrieval import BuildContext

pytestmark = pytest.mark.model  # m3e-small, fp32 and int8

TEXTS = ["如何做红烧肉？", "五花肉切块焯水，冰糖炒出糖色后下肉翻炒，加生抽老抽和热水，小火炖一小时。", "清蒸鲈鱼要蒸八分钟"]


def test_the_int8_variant_has_its_own_identity_and_close_vectors():
    fp32, int8 = get_embedder("m3e-small"), get_embedder("m3e-small@int8")
    assert int8.identity == fp32.identity + ":int8=dynamic-qint8-linear-per-text"
    a, b = fp32.embed(TEXTS), int8.embed(TEXTS)
    assert b.dtype == np.float32 and np.allclose(np.linalg.norm(b, axis=1), 1, atol=1e-5)
    assert (a * b).sum(axis=1).min() > 0.95  # the same direction, within quantisation error
    assert not np.array_equal(a, b)  # and really quantised


def test_only_sentence_transformers_models_have_it():
    with pytest.raises(EmbedderError, match="hashing@int8: @int8 is available for sentence-transformers models only"):
        get_embedder("hashing@int8")


def test_demo_quality_and_a_warm_run_that_loads_nothing(demo_dataset, tmp_path):
    dataset = load_dataset(demo_dataset)
    config = EvalConfig(model="m3e-small@int8", ks=[1, 5])
    cold = evaluate(dataset, config, cache=EmbeddingCache(tmp_path), progress=False)
    assert cold.means["doc"]["hit_rate@5"] == 1.0 and cold.embedded_texts > 0
    assert cold.retriever["embedders"]["dense"].endswith(":int8=dynamic-qint8-linear-per-text")
    context = BuildContext(cache=EmbeddingCache(tmp_path))
    warm = evaluate(dataset, config, context=context, progress=False)
    assert warm.embedded_texts == 0 and warm.means == cold.means
    assert context.embedders["m3e-small@int8"]._model is None  # every vector came from the cache


def test_the_batch_size_changes_speed_not_vectors(monkeypatch):
    """fp32 texts per forward pass: 8 on the CPU by default, sized when it loads on a GPU, or as given; sentence-transformers
    pads each batch to its longest text, so the same texts in batches of 8 or of 2 give the same vectors to float
    rounding, and the batch size stays out of the identity."""
    monkeypatch.delenv("RAGRETRIEVAL_DEVICE", raising=False)
    default = SentenceTransformerEmbedder("m3e-small")
    assert default.batch_size == 8 and SentenceTransformerEmbedder("m3e-small", device="CPU:0").batch_size == 8
    # on a GPU the batch is sized to its free memory when the model loads; nothing loads until it embeds
    assert SentenceTransformerEmbedder("m3e-small", device="cuda").batch_size is None
    monkeypatch.setenv("RAGRETRIEVAL_DEVICE", "cuda:1")
    assert SentenceTransformerEmbedder("m3e-small").ran() == {"device": "cuda:1", "dtype": "float16", "batch_size": None}
    monkeypatch.delenv("RAGRETRIEVAL_DEVICE")
    with pytest.raises(EmbedderError, match="m3e-small: batch_size must be at least 1, not 0"):
        SentenceTransformerEmbedder("m3e-small", batch_size=0)
    paired = SentenceTransformerEmbedder("m3e-small", batch_size=2)
    assert paired.batch_size == 2 and paired.identity == default.identity
    texts = TEXTS * 3 + ["红烧肉"]
    a, b = default.embed(texts), paired.embed(texts)
    assert np.abs(a - b).max() < 1e-5 and (a * b).sum(axis=1).min() > 0.99999


def test_an_int8_vector_is_a_function_of_its_text():
    """Dynamic int8 scales a layer's input by the whole batch's range, so in a batch a text's vector moved with its
    batch mates (cosine about 0.986 between batchings, as far as int8 is from fp32): the variant embeds one text
    per pass, so a text gives the same bits alone or among others, and no other batch size is accepted."""
    int8 = get_embedder("m3e-small@int8")
    assert SentenceTransformerEmbedder("m3e-small", quantize="int8").batch_size == 1
    texts = TEXTS * 3 + ["红烧肉"]
    together = int8.embed(texts)
    assert np.array_equal(together, np.vstack([int8.embed([text]) for text in texts]))
    assert np.array_equal(together[0], together[3])
    with pytest.raises(EmbedderError, match=r"m3e-small@int8 embeds one text per forward pass .* batch_size 8 cannot"):
        SentenceTransformerEmbedder("m3e-small", quantize="int8", batch_size=8)
    assert SentenceTransformerEmbedder("m3e-small", quantize="int8", batch_size=1).batch_size == 1
