"""The engine the web app's tests run evaluations with (``--engine server.http_engine:prepare``, with ``tests`` on
PYTHONPATH): it answers and judges each question by asking the service at the evaluation's ``http:<url>`` generator
(rag_service.py). It stands where the answer engine of `ragretrieval answer` will stand; everything around it (the
worker, claims, heartbeats, the database, the pages) is the real thing."""

from __future__ import annotations

import json
import time
import urllib.request

from ragretrieval.errors import RagretrievalError
from ragretrieval.server.jobs.engine import EvaluationSettings, QuestionItem, QuestionResult


class HttpRunner:
    def __init__(self, url: str):
        self.url = url
        self.closed = False

    def run(self, question: QuestionItem) -> QuestionResult:
        body = json.dumps({"question_id": question.question_id, "question": question.question_text,
                           "ground_truth": question.ground_truth}).encode("utf-8")
        started = time.perf_counter()
        request = urllib.request.Request(self.url, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.loads(response.read())
        if answer.get("error"):
            return QuestionResult(error=answer["error"])
        return QuestionResult(
            rag_answer=answer["answer"], rag_answer_sources=answer.get("sources", []),
            llm_judge_score=answer.get("score"), llm_judge_reasoning=answer.get("reasoning"),
            checks=answer.get("checks", {"answered": True}), metrics=answer.get("metrics", {}),
            input_tokens=len(question.question_text), output_tokens=len(answer["answer"]),
            latency=time.perf_counter() - started, cost=0.0)

    def close(self) -> None:
        self.closed = True


def prepare(evaluation: EvaluationSettings, stop) -> HttpRunner:
    if not evaluation.generator.startswith("http:"):
        raise RagretrievalError(f"the test engine answers only through http:<url>; got {evaluation.generator}")
    if evaluation.dataset_path is None:
        raise RagretrievalError(f"corpus {evaluation.dataset!r} is not under this worker's --datasets")
    return HttpRunner(evaluation.generator[len("http:"):])
