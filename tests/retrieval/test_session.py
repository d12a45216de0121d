"""The retrieval session both `evaluate` and `answer` run: a batch at a time or all at once, the same rankings and
scores; its search time adds up across batches; a question without relevant documents is searched, never scored."""

from __future__ import annotations

import numpy as np
import pytest

from ragretrieval.data.dataset import load_dataset
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.retrieval.session import RetrievalSession


@pytest.fixture(scope="module")
def dataset(demo_slice_dataset):
    return load_dataset(demo_slice_dataset)


def test_one_question_at_a_time_ranks_and_scores_as_one_batch(dataset):
    config = EvalConfig(retriever="bm25", chunk_size=200, ks=[1, 5])
    session = RetrievalSession(dataset, config)
    questions = list(dataset.questions)
    ranking, whole = session.retrieve(questions, 5)
    scored = session.score(whole)
    assert set(scored) == {"doc", "chunk"} and len(whole.retrieved) == len(questions)
    for i, question in enumerate(questions):
        one, found = session.retrieve([question], 5)
        assert one.positions[0].tolist() == ranking.positions[i].tolist()
        assert found.retrieved[0] == whole.retrieved[i]
        for level, result in session.score(found, [question.id]).items():
            assert {name: v[0] for name, v in result.per_query.items()} == \
                {name: v[i] for name, v in scored[level].per_query.items()}, (question.id, level)
    assert session.timings["searching"] > 0 and session.timings["chunking"] > 0


def test_evaluate_reports_what_the_session_scores(dataset):
    config = EvalConfig(retriever="bm25", chunk_size=200, ks=[3], granularity="doc")
    report = evaluate(dataset, config)
    session = RetrievalSession(dataset, config)
    scored = session.score(session.retrieve(list(dataset.questions), 3)[1])
    assert set(scored) == {"doc"}
    assert report.means["doc"] == pytest.approx(scored["doc"].means)
    assert [q.metrics["doc"]["recall@3"] for q in report.questions] == scored["doc"].per_query["recall@3"].tolist()


def test_a_question_without_relevant_documents_is_searched_but_not_scored(dataset):
    unlabelled = dataset.questions[0].model_copy(update={"id": "no-labels", "relevant": []})
    session = RetrievalSession(dataset, EvalConfig(retriever="bm25", chunk_size=200, ks=[1]))
    ranking, found = session.retrieve([unlabelled], 1)
    assert (ranking.positions[0] >= 0).any() and found.retrieved[0]
    assert "no-labels" not in session.row  # answers leave it out of `score`; evaluate never passes it
    assert np.array_equal(session.doc_qrels.query_ids, [q.id for q in dataset.questions if q.relevant])
