"""``st-cross:<id-or-folder>``: a sentence-transformers `CrossEncoder` reads each (question, passage) pair and scores
it. A hub id must already be in the local Hugging Face cache (nothing is downloaded); a folder is hashed into the
identity like an embedder's."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ...embedders.sentence_transformer import _hub_revision, folder_hash, load_model
from .base import ONE_AT_A_TIME, PerQuestion, RerankError

BATCH_SIZE = 32


class CrossEncoderReranker(PerQuestion):
    concurrency = ONE_AT_A_TIME

    def __init__(self, name: str, settings, context):
        super().__init__(context.progress, context.stop)
        self.model_name = name.removeprefix("st-cross:")
        if not self.model_name:
            raise RerankError(f"{name!r}: name a cross-encoder after 'st-cross:' (a hub id or a folder)")
        self.path = Path(self.model_name) if Path(self.model_name).is_dir() else None
        version = folder_hash(self.path) if self.path is not None else _hub_revision(self.model_name)
        if version is None:
            raise RerankError(f"cross-encoder {self.model_name!r} is neither a folder nor a model in the local "
                              "Hugging Face cache; download it first (huggingface-cli download <id>) or give its "
                              "folder")
        self.identity = f"st-cross:{self.model_name}@{version}"
        self._model = None

    def _load(self):
        if self._model is None:
            self._model = load_model("CrossEncoder", self.path, self.model_name, "cpu", RerankError, "cross-encoder")
        return self._model

    def score(self, question: str, passages: Sequence[str]) -> np.ndarray:
        return self._load().predict([(question, passage) for passage in passages], batch_size=BATCH_SIZE,
                                    show_progress_bar=False, convert_to_numpy=True)
