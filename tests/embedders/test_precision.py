"""A local model's precision (``EmbedSettings.dtype``) and texts per forward pass (``batch_size``): the auto rules,
the resolved dtype in the identity and the cache key (float32 keeps the identity earlier versions wrote), the batch
size in neither, the refusals, and bfloat16/float16 on the CPU with a real (random-weight) model."""

from __future__ import annotations

import numpy as np
import pytest

from ragretrieval.data.dataset import load_dataset
from ragretrieval.embedders import EmbedderError, EmbeddingCache, EmbedSettings, embed_cached, get_embedder
from ragretrieval.embedders.sentence_transformer import (
    GPU_MAX_BATCH,
    GPU_MIN_BATCH,
    SentenceTransformerEmbedder,
    gpu_batch_size,
    resolve_dtype,
)
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.runs.identity import config_key
from ragretrieval.work.options import SettingsError

TEXTS = ["如何做红烧肉？", "五花肉切块焯水，冰糖炒出糖色后下肉翻炒。", "清蒸鲈鱼要蒸八分钟", "salt and pepper"] * 3


@pytest.mark.parametrize("asked, device, config_dtype, resolved", [
    ("auto", "cpu", None, "float32"),
    ("auto", "CPU:0", "bfloat16", "float32"),  # on a CPU auto is float32 whatever the model was made in
    ("auto", "cuda", None, "float16"),
    ("auto", "cuda:1", "float32", "float16"),
    ("auto", "cuda", "bfloat16", "bfloat16"),  # the model's own config asks for bfloat16
    ("auto", "mps", None, "float16"),
    ("bfloat16", "cpu", None, "bfloat16"),
    ("float32", "cuda", "bfloat16", "float32"),  # what was asked wins
    ("float16", "cpu", None, "float16"),
])
def test_auto_dtype_rules(asked, device, config_dtype, resolved):
    assert resolve_dtype(asked, device, config_dtype) == resolved


def test_a_gpu_batch_is_a_power_of_two_sized_to_free_memory_within_bounds():
    gib = 1 << 30
    assert gpu_batch_size(70 * gib, 768, 3072, 512, "float16") == GPU_MAX_BATCH  # an idle H100: the cap
    assert gpu_batch_size(0, 768, 3072, 512, "float16") == GPU_MIN_BATCH  # nothing free: still a batch
    small = gpu_batch_size(8 * gib, 768, 3072, 512, "float32")
    assert GPU_MIN_BATCH < small < GPU_MAX_BATCH and small & (small - 1) == 0
    assert gpu_batch_size(8 * gib, 768, 3072, 512, "float16") == 2 * small  # half the bytes per value


@pytest.fixture()
def model_folder(tmp_path):
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 8, "torch_dtype": "float32"}', encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


def test_float32_keeps_the_identity_earlier_versions_wrote_and_others_add_their_dtype(model_folder, monkeypatch):
    monkeypatch.delenv("RAGRETRIEVAL_DEVICE", raising=False)
    fp32 = SentenceTransformerEmbedder(str(model_folder)).identity
    assert fp32.startswith(f"sentence-transformers:{model_folder}@") and fp32.endswith(":normalize=True")
    assert SentenceTransformerEmbedder(str(model_folder), dtype="float32").identity == fp32
    assert SentenceTransformerEmbedder(str(model_folder), dtype="bfloat16").identity == fp32 + ":dtype=bfloat16"
    assert SentenceTransformerEmbedder(str(model_folder), dtype="float16").identity == fp32 + ":dtype=float16"
    assert SentenceTransformerEmbedder(str(model_folder), device="cuda").identity == fp32 + ":dtype=float16"
    assert SentenceTransformerEmbedder(str(model_folder), device="cuda", dtype="float32").identity == fp32
    (model_folder / "config.json").write_text('{"torch_dtype": "bfloat16"}', encoding="utf-8")
    made_in_bf16 = SentenceTransformerEmbedder(str(model_folder), device="cuda")
    assert made_in_bf16.identity.endswith(":dtype=bfloat16") and made_in_bf16.dtype == "bfloat16"


def test_the_batch_size_is_in_no_identity_and_no_configuration_key(model_folder):
    identities = {get_embedder(str(model_folder), settings={"batch_size": size}).identity
                  for size in ("auto", 1, 8, 4096)}
    assert len(identities) == 1
    keys = {config_key(EvalConfig(model=str(model_folder), embed=embed), "c", "q")
            for embed in (None, {"batch_size": 16}, {"batch_size": "auto"}, {"dtype": "auto"})}
    assert len(keys) == 1
    assert config_key(EvalConfig(model=str(model_folder), embed={"dtype": "bfloat16"}), "c", "q") not in keys


def test_what_was_asked_is_recorded_not_what_ran():
    assert EvalConfig(embed={"dtype": "auto", "batch_size": "auto"}).embed is None  # the defaults
    assert EvalConfig(embed={"dtype": "bfloat16", "batch_size": "32"}).embed == {"dtype": "bfloat16",
                                                                              "batch_size": 32}


@pytest.mark.parametrize("settings, says", [
    ({"dtype": "bfloat16"}, "m3e-small@int8 runs int8 layers made from float32 weights on the CPU; dtype bfloat16"),
    ({"dtype": "float16"}, "dtype float16 cannot be used (auto or float32 only)"),
    ({"batch_size": 8}, "m3e-small@int8 embeds one text per forward pass"),
])
def test_int8_takes_no_other_dtype_and_no_other_batch_size(settings, says):
    with pytest.raises(EmbedderError, match=says.replace("(", r"\(").replace(")", r"\)")) as caught:
        get_embedder("m3e-small@int8", settings=settings)
    assert caught.value.exit_code == 2
    for fine in ({"dtype": "float32"}, {"dtype": "auto"}, {"batch_size": 1}, {"batch_size": "auto"}):
        assert get_embedder("m3e-small@int8", settings=fine).identity.endswith(":int8=dynamic-qint8-linear-per-text")


def test_a_model_without_a_precision_refuses_a_dtype():
    with pytest.raises(EmbedderError, match="hashing-64: dtype float16 is for sentence-transformers models"):
        get_embedder("hashing-64", settings={"dtype": "float16"})
    assert get_embedder("hashing-64", settings={"dtype": "auto", "batch_size": 3}).identity == \
        get_embedder("hashing-64").identity


BAD_BATCH_SIZES = ["", " ", "0", 0, -1, "-8", 4097, 10**12, "1e3", 2.5, True, False, None, [8], {"n": 8}, "eight",
                   "Auto"]


@pytest.mark.parametrize("value", BAD_BATCH_SIZES, ids=repr)
def test_a_bad_batch_size_is_refused_naming_the_field(value):
    with pytest.raises(SettingsError, match="embed.batch_size: must be auto or a whole number from 1 to 4096"):
        EvalConfig(embed={"batch_size": value})
    with pytest.raises(EmbedderError, match="'batch_size': must be auto or a whole number"):
        EmbedSettings.parse({"batch_size": value})


@pytest.mark.parametrize("value", ["", "fp16", "half", "FLOAT32", "int8", 16, None, True, ["float32"]], ids=repr)
def test_a_bad_dtype_is_refused_naming_the_field(value):
    with pytest.raises(SettingsError, match="embed.dtype: Input should be 'auto', 'float32', 'float16' or "
                                            "'bfloat16'"):
        EvalConfig(embed={"dtype": value})


@pytest.mark.model  # a random-weight sentence-transformers model, loaded with torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16_bit_vectors_on_the_cpu_are_float32_unit_rows_close_to_float32s(random_model, dtype):
    fp32 = get_embedder(str(random_model)).embed(TEXTS)
    low = get_embedder(str(random_model), settings={"dtype": dtype}).embed(TEXTS)
    assert low.dtype == np.float32 and low.shape == fp32.shape
    assert np.allclose(np.linalg.norm(low, axis=1), 1, atol=1e-6)
    assert (fp32 * low).sum(axis=1).min() > 0.99 and not np.array_equal(fp32, low)


@pytest.mark.model
def test_two_precisions_never_share_cached_vectors(random_model, tmp_path):
    cache = EmbeddingCache(tmp_path)
    fp32, bf16 = get_embedder(str(random_model)), get_embedder(str(random_model), settings={"dtype": "bfloat16"})
    first, made = embed_cached(fp32, TEXTS, cache, progress=False)
    assert made == 4
    second, made = embed_cached(bf16, TEXTS, cache, progress=False)
    assert made == 4 and cache.count() == 8  # bfloat16 embeds again: fp32's vectors are not its
    again, made = embed_cached(get_embedder(str(random_model), settings={"batch_size": 1}), TEXTS, cache,
                               progress=False)
    assert made == 0 and np.array_equal(again, first)  # another batch size finds fp32's vectors
    assert not np.array_equal(first, second)


@pytest.mark.model
def test_the_report_says_what_ran_and_the_configuration_what_was_asked(random_model, demo_dataset, tmp_path):
    dataset = load_dataset(demo_dataset)
    report = evaluate(dataset, EvalConfig(model=str(random_model), embed={"dtype": "bfloat16", "batch_size": 4},
                                          ks=[1, 5]), cache=EmbeddingCache(tmp_path), progress=False)
    assert report.config.embed == {"dtype": "bfloat16", "batch_size": 4}
    assert report.retriever["details"]["embedding"] == {"device": "cpu", "dtype": "bfloat16", "batch_size": 4}
    assert report.retriever["embedders"]["dense"].endswith(":dtype=bfloat16")
    auto = evaluate(dataset, EvalConfig(model=str(random_model), ks=[1, 5]), cache=EmbeddingCache(tmp_path),
                    progress=False)
    assert auto.config.embed is None
    assert auto.retriever["details"]["embedding"] == {"device": "cpu", "dtype": "float32", "batch_size": 8}
