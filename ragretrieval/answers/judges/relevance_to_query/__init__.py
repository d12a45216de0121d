"""``relevance_to_query``: does the answer address what was asked (right or wrong)? no when it talks about something
else or evades; an honest "the documents do not say" addresses the question.
Metric ``response/llm_judged/relevance_to_query/rating``."""

from __future__ import annotations

from ..llm_judge import YesNoJudge


class RelevanceToQueryJudge(YesNoJudge):
    name = "relevance_to_query"
    metric = "response/llm_judged/relevance_to_query/rating"
    placeholders = required = ("question", "answer")
