"""Plain-text tables of runs, shared by ``runs list`` and ``sweep``; metric columns are named like ``recall@5``
(document level when the run has it), ``chunk:recall@5``, or ``answer:checks_score`` (an answer run's
metric)."""

from __future__ import annotations

import unicodedata

from ..scoring import parse_metric
from ..scoring.answer_metrics import FORMER_NAMES


def parse_metric_column(spec: str) -> tuple[str | None, str]:
    """``"recall@5"`` -> (None, "recall@5"): doc level if present, else chunk; ``"chunk:ndcg@10"`` -> ("chunk", ...)."""
    level, sep, name = spec.partition(":")
    if not sep:
        level, name = None, spec
    elif level not in ("doc", "chunk", "answer"):
        raise ValueError(f"metric {spec!r}: the level before ':' must be doc, chunk or answer")
    if level == "answer":
        if not name:
            raise ValueError(f"metric {spec!r}: name an answer metric after 'answer:', e.g. answer:checks_score")
        return level, name
    parse_metric(name)  # raises MetricError naming the bad part
    return level, name


def metric_value(means: dict[str, dict[str, float]], spec: str) -> float | None:
    level, name = parse_metric_column(spec)
    if level == "answer":  # answer:score, the checks' score's former name, still names it (CHANGELOG: until 0.4)
        name = FORMER_NAMES.get(name, name)
    for granularity in ([level] if level else ["doc", "chunk"]):
        if name in means.get(granularity, {}):
            return means[granularity][name]
    return None


def _width(text: str) -> int:
    """Terminal columns: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def format_table(headers: list[str], rows: list[list[str]], right: set[int] = frozenset()) -> str:
    """Columns padded to their widest cell; the columns in `right` are right-aligned (numbers)."""
    widths = [max([_width(h)] + [_width(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells):
        padded = [(" " * (w - _width(c)) + c) if i in right else (c + " " * (w - _width(c)))
                  for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(padded).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def number(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def reranked_by(rerank: str | None) -> str:
    """How a reranking stage follows its retriever in tables, run names and messages: `` > embed:e5-small-q4``
    (nothing without one)."""
    return f" > {rerank}" if rerank else ""


def retriever_cell(summary) -> str:
    """A run's retriever, then its reranking stage if any: ``bm25 > embed:e5-small-q4``."""
    return summary.retriever + reranked_by(summary.rerank)
