"""``context_sufficiency``: do the contexts hold everything the reference answer needs? yes when every fact of the
reference answer is found in or follows from them. It judges the retriever, not the generator.
Metric ``retrieval/llm_judged/context_sufficiency/rating``. Needs a reference answer and contexts."""

from __future__ import annotations

from ..llm_judge import YesNoJudge


class ContextSufficiencyJudge(YesNoJudge):
    name = "context_sufficiency"
    metric = "retrieval/llm_judged/context_sufficiency/rating"
    placeholders = required = ("question", "ground_truth", "contexts")
    needs = ("ground_truth", "contexts")
