"""What every retriever is to the rest of ragretrieval: the `Retriever` protocol, the `Ranking` it returns, the
`RetrieverSpec` that names and configures it, and the `RetrieverInfo` a run records about it.

A retriever indexes our chunks once, then answers a batch of questions with a `Ranking`: per question, positions in a
hit table, best first. Positions ``0 .. n-1`` are the chunks it indexed, in indexing order (what a vector store or
BM25 returns); a retriever that runs outside ragretrieval (a service, a results file) names what it found by id, and
whatever is not one of our chunks is appended to the table as a `Hit` (``foreign``). So `evaluate` has one path for
every retriever, and the roll-up to documents (rollup.py) needs no string look-ups for our own chunks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, Sequence, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..data.chunking import Chunk
from ..data.dataset import QuestionRecord
from ..stores.base import SearchResult
from ..work.options import PluginOptions


@dataclass(frozen=True)
class Hit:
    """Something an outside retriever found: a chunk id and/or a parent document id, a score, maybe its text."""

    parent_id: str | None = None
    chunk_id: str | None = None
    score: float | None = None
    text: str | None = None


@dataclass(frozen=True)
class Ranking:
    """Per question, best first: ``positions`` (n_questions x depth, -1 pads) index our chunks, then `foreign`;
    ``scores`` are the retriever's own (NaN where it gave none), carried into reports, never used to re-order."""

    positions: np.ndarray
    scores: np.ndarray
    foreign: tuple[Hit, ...] = ()

    @classmethod
    def from_search(cls, result: SearchResult) -> "Ranking":
        return cls(np.asarray(result.indices, dtype=np.int64), np.asarray(result.scores, dtype=np.float32))

    @property
    def depth(self) -> int:
        return self.positions.shape[1]

    def head(self, depth: int) -> "Ranking":
        return Ranking(self.positions[:, :depth], self.scores[:, :depth], self.foreign)


@dataclass
class RetrieverInfo:
    """What a run records about how it retrieved, beyond its configuration."""

    embedders: dict[str, str] = field(default_factory=dict)  # role ("dense", "rerank", ...) -> embedder identity
    embedded_texts: int = 0  # texts a model embedded in this run (not found in the cache)
    notes: list[str] = field(default_factory=list)  # true statements about this run, shown with the table
    details: dict[str, Any] = field(default_factory=dict)  # e.g. a hybrid's parts, a reranker's identity

    def merge(self, other: "RetrieverInfo", prefix: str = "", part: str | None = None) -> None:
        """Fold a child retriever's info into this one (a hybrid's or reranker's parts): its embedder roles get
        `prefix`, its details go under `part` (default: the prefix without its dot, else "child")."""
        self.embedders.update({prefix + role: identity for role, identity in other.embedders.items()})
        self.embedded_texts += other.embedded_texts
        self.notes.extend(note for note in other.notes if note not in self.notes)
        if other.details:
            self.details.setdefault("parts", {})[part or prefix.rstrip(".") or "child"] = other.details


@runtime_checkable
class Retriever(Protocol):
    """Everything `evaluate` and `answer` use of a retriever."""

    timings: dict[str, float]  # stage -> seconds ("embedding", "indexing", "rerank", ...), filled as it works

    def index(self, chunks: Sequence[Chunk]) -> None: ...

    def search(self, questions: Sequence[QuestionRecord], depth: int) -> Ranking: ...

    def info(self) -> RetrieverInfo: ...


class RetrieverSpec(BaseModel):
    """A retriever by registry name, its options, and the retrievers it is made of (a hybrid's parts, a reranker's
    first stage): a spec of specs. Options are plain JSON values, so a spec is recorded in every run."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    options: dict[str, Any] = Field(default_factory=dict)
    children: tuple["RetrieverSpec", ...] = ()

    def label(self) -> str:
        """A short human name: ``dense(m3e-small)``, ``hybrid(bm25 + dense(e5-small-q4))``."""
        inner = [child.label() for child in self.children]  # a composite's model is its children's
        if not inner and self.options.get("model"):
            inner = [self.options["model"]]
        return f"{self.name}({' + '.join(inner)})" if inner else self.name


class RetrieverPlugin(Protocol):
    """The class registered under a retriever name (registry.py): it builds retrievers from specs.

    `config_fields` are the evaluation settings (``model``, ``store``, ``store_options``) its spec takes from an
    `EvalConfig`; ``retriever_options`` (``--retriever-option key=value``) are added to them, validated through
    `Options` (a `PluginOptions` model: name, type, default and help of each option; None: not declared, passed
    as given).
    """

    sweepable: ClassVar[bool]  # may be a sweep cell: needs nothing outside ragretrieval
    config_fields: ClassVar[tuple[str, ...]]
    keeps_index: ClassVar[bool]  # can save its index in --index-dir
    Options: ClassVar[type[PluginOptions] | None]

    @classmethod
    def children(cls, options: dict) -> tuple[RetrieverSpec, ...]: ...

    @classmethod
    def build(cls, spec: RetrieverSpec, context) -> Retriever: ...


class SimpleRetriever:
    """Defaults for the plugin side of a retriever class: no children, no index folder, not swept, nothing recorded."""

    sweepable: ClassVar[bool] = False
    config_fields: ClassVar[tuple[str, ...]] = ()
    keeps_index: ClassVar[bool] = False
    Options: ClassVar[type[PluginOptions] | None] = None

    @classmethod
    def children(cls, options: dict) -> tuple[RetrieverSpec, ...]:
        return ()

    def info(self) -> RetrieverInfo:
        return RetrieverInfo()


def question_texts(questions: Sequence[QuestionRecord | str]) -> list[str]:
    """The texts to search with; plain strings are accepted for convenience."""
    return [q if isinstance(q, str) else q.text for q in questions]
