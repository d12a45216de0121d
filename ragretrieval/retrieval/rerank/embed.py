"""``embed:<embedder>``: re-score the first stage's candidates by cosine with another embedder (any ``--model``
name, e.g. BM25 first and ``e5-small-q4`` second). It works offline with the models that ship in packages, and
embeds through the embedding cache: each candidate text is embedded once per model, whatever the question."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...embedders.settings import EmbedSettings
from ...work.progress import as_progress
from .base import RerankError, question_text


class EmbedReranker:
    def __init__(self, name: str, settings, context):
        model = name.removeprefix("embed:")
        if not model:
            raise RerankError(f"{name!r}: name an embedder after 'embed:', e.g. embed:e5-small-q4")
        # the run's API endpoint, not --model's dimensions or prefixes
        shared = EmbedSettings.parse(settings.embed).shared().recorded() if settings.embed else None
        self.embedder = context.embedder(model, shared)
        self.cache, self.stop = context.embedding_cache(), context.stop
        self.progress = as_progress(context.progress)
        self.model = model

    @property
    def identity(self) -> str:
        query, passage = self.embedder.for_side("query").identity, self.embedder.for_side("passage").identity
        return f"embed:{passage}" + (f" (questions: {query})" if query != passage else "")

    def rerank(self, questions: Sequence, candidates: Sequence[Sequence[str]]) -> list[np.ndarray]:
        from ...embedders import embed_cached

        texts = list(dict.fromkeys(text for row in candidates for text in row))
        batch = getattr(self.embedder, "preferred_batch", 64)
        passages, _ = embed_cached(self.embedder.for_side("passage"), texts, self.cache, batch, self.progress,
                                   "reranking: embedding candidates", stop=self.stop)
        asked, _ = embed_cached(self.embedder.for_side("query"), [question_text(q) for q in questions], self.cache,
                                batch, self.progress, "reranking: embedding questions", stop=self.stop)
        row_of = {text: i for i, text in enumerate(texts)}
        return [passages[[row_of[t] for t in row]] @ asked[i] if len(row) else np.zeros(0, np.float32)
                for i, row in enumerate(candidates)]
