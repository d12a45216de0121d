"""Defaults the docs state in a sentence, outside the generated option tables (ragretrieval/cli/option_tables.py),
are read here from the models that declare them: the test fails when a page and its model disagree, and says what
the page should read."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from ragretrieval.analysis.settings import PAIRED
from ragretrieval.answers.generators.http_service import HttpGeneratorOptions
from ragretrieval.embedders.settings import EmbedSettings
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.llm.client import LLMSettings
from ragretrieval.llm.questions.build import QuestionOptions
from ragretrieval.retrieval.external.http import HttpMapping
from ragretrieval.retrieval.hybrid import HybridOptions
from ragretrieval.server import schemas
from ragretrieval.server.schemas import GenerateIn

ROOT = Path(__file__).resolve().parents[1]


def defaults(model, *names: str) -> dict:
    return {name: model.model_fields[name].default for name in names}


# (page, what it says with the model's values put in, the values); each phrase sits on one line of the page
STATED: list[tuple[str, str, Callable[[], dict]]] = [
    ("docs/answers/generate.md",
     "seconds per request ({timeout:g}), retries on connection errors, 408/425/429/5xx ({retries})",
     lambda: defaults(HttpGeneratorOptions, "timeout", "retries")),
    ("docs/llm.md", "| `--per-doc N` | questions asked per document (default {per_doc});",
     lambda: {"per_doc": QuestionOptions.per_doc}),
    ("docs/web.md", '"count"? (1-200, default {count}), "per_doc"? (default {per_doc})',
     lambda: defaults(GenerateIn, "count", "per_doc")),
    ("docs/web.md", "`&alpha=` (0-1, default {alpha:g}), `&n_resamples=` (1-100,000, default {n_resamples:,})",
     lambda: {"alpha": PAIRED.alpha, "n_resamples": PAIRED.n_resamples}),
    ("docs/web.md", "(t-test, Holm over the level's metrics, α {alpha:g})", lambda: {"alpha": PAIRED.alpha}),
    ("docs/troubleshooting.md", "`--max-retries` times (default {max_retries}), backoff {backoff:g} s doubling",
     lambda: defaults(LLMSettings, "max_retries", "backoff")),
    ("docs/stores.md", "`--search-concurrency N` threads at once (default {search_concurrency};",
     lambda: defaults(EvalConfig, "search_concurrency")),
    ("docs/report-format.md", "Threads of the concurrent search-timing pass (default {search_concurrency}).",
     lambda: defaults(EvalConfig, "search_concurrency")),
    ("docs/embedders.md", "| `--embed-concurrency N` | requests at once (default {concurrency}) |",
     lambda: defaults(EmbedSettings, "concurrency")),
    ("docs/embedders.md", "| `--rrf-k K` | its k (default {rrf_k:g}) |", lambda: defaults(HybridOptions, "rrf_k")),
    ("docs/embedders.md", "| `--alpha A` | the dense part's weight (default {alpha:g}) |",
     lambda: defaults(HybridOptions, "alpha")),
    ("docs/embedders.md", "| `--retriever-option candidates=N` | how deep each part is searched before fusion (default "
     "{candidates},", lambda: defaults(HybridOptions, "candidates")),
    ("docs/web.md", "a page of finished `results` (`?offset=&limit=`, default {page}, up to {most})",
     lambda: {"page": schemas.PAGE_SIZE, "most": schemas.MAX_PAGE_SIZE}),
    ("docs/web.md", "`&offset=&limit=` (the paired questions, default {page}, up to {most})",
     lambda: {"page": schemas.PAGE_SIZE, "most": schemas.MAX_PAGE_SIZE}),
    ("docs/web.md", "without their questions (`?offset=&limit=`, limit up to {most};",
     lambda: {"most": schemas.MAX_PAGE_SIZE}),
    ("docs/troubleshooting.md", "`retries` times (default {retries}), backoff from `backoff` (default {backoff:g} s)",
     lambda: defaults(HttpMapping, "retries", "backoff")),
]


def disagreement(root: Path, page: str, phrase: str, values: dict) -> str | None:
    """None when `page` says `phrase` with `values` put in; else what it says instead and what it should."""
    expected = phrase.format(**values)
    lines = (root / page).read_text(encoding="utf-8").splitlines()
    if any(expected in line for line in lines):
        return None
    start = phrase.split("{", 1)[0]
    found = next((line.strip() for line in lines if start in line), "nothing like it")
    return f"{page} should say {expected!r} (the model's defaults), but says: {found}"


@pytest.mark.parametrize("page, phrase, values", STATED, ids=[f"{p}:{t.split('{')[0][:30]}" for p, t, _ in STATED])
def test_a_default_stated_in_prose_is_the_models(page, phrase, values):
    problem = disagreement(ROOT, page, phrase, values())
    assert problem is None, problem


def test_a_page_that_disagrees_is_named_with_what_it_should_say(tmp_path):
    (tmp_path / "page.md").write_text("| `--per-doc N` | questions asked per document (default 3); more |\n",
                                      encoding="utf-8")
    phrase = "| `--per-doc N` | questions asked per document (default {per_doc});"
    assert disagreement(tmp_path, "page.md", phrase, {"per_doc": 3}) is None
    problem = disagreement(tmp_path, "page.md", phrase, {"per_doc": 5})
    assert problem.startswith("page.md should say '| `--per-doc N` | questions asked per document (default 5);'")
    assert problem.endswith("but says: | `--per-doc N` | questions asked per document (default 3); more |")
