"""Agreement with ranx, pytrec_eval and ir_measures on generated cases, per query and on average, to 1e-9.

Each tool is fed the same ranking and the same query set, in the form it needs (see docs/metrics.md, "Agreement with
reference tools"): pytrec_eval gets the raw, tied scores (it breaks ties as trec_eval does; the scores are multiples
of 1/4, so its float32 rounding changes nothing); ranx and ir_measures get one distinct score per rank, taken from a
reference ranking written here from the definition (best occurrence of each doc, score descending, doc id descending
in byte order), because ranx breaks ties arbitrarily and ir_measures' RR@k breaks them by doc id ascending.
Duplicates are removed (best occurrence kept) before the others see the run. pytrec_eval and ir_measures (which
runs pytrec_eval) get fresh query ids and no negative labels for each evaluation, to steer clear of a pytrec_eval
hang (see `no_negative_labels`).
"""

from __future__ import annotations

import itertools
import math
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragretrieval.scoring import Qrels, Run, score

ranx = pytest.importorskip("ranx")
pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")

CUTOFFS = (1, 2, 3, 5, 10)
CUT = ("precision", "recall", "hit_rate", "mrr", "f1", "ndcg", "ndcg_exp", "map")
METRICS = [f"{f}@{k}" for f in CUT for k in CUTOFFS] + ["mrr", "ndcg", "map", "r_precision"]
# doc ids whose byte order differs from naive expectations: case, prefixes, digits, multi-byte UTF-8
DOCS = ["d0", "d1", "d10", "d2", "D2", "d1x", "e", "é", "ü9", "z", "Z", "a", "0", "d9"]
SCORES = [-1.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.25]  # exact in float32, and often tied
EXAMPLES = int(os.environ.get("RAGRETRIEVAL_AGREEMENT_EXAMPLES", 200))  # per tool; raise it for a longer hunt
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def cases(draw):
    """(labels, run lines per query, relevance level): graded and negative labels, queries with nothing relevant,
    qrels queries missing from the run, a run query without labels, duplicates, short runs and ties."""
    queries = [f"q{i}" for i in range(draw(st.integers(1, 5)))]
    labels = {}
    for query in queries:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
        labels[query] = {doc: draw(st.integers(-1, 3)) for doc in docs}
    in_run = [q for q in queries if draw(st.booleans()) or q == queries[0]]
    if draw(st.booleans()):
        in_run.append("unlabelled")
    lines = {q: draw(st.lists(st.tuples(st.sampled_from(DOCS), st.sampled_from(SCORES)), min_size=1, max_size=12))
             for q in in_run}
    return labels, lines, draw(st.sampled_from([1, 2]))


def reference_ranking(lines: dict) -> dict[str, list[str]]:
    """trec_eval's ranking, from the definition: best score per doc, score descending, then doc id descending."""
    ranking = {}
    for query, pairs in lines.items():
        best: dict[str, float] = {}
        for doc, value in pairs:
            best[doc] = max(value, best.get(doc, -math.inf))
        by_id = sorted(best, key=lambda d: d.encode(), reverse=True)
        ranking[query] = sorted(by_id, key=lambda d: -best[d])  # stable: equal scores keep doc id descending
    return ranking


def our_run(lines: dict) -> Run:
    """The raw lines as a Run: row order as given, duplicates kept, scores kept."""
    vocabulary: dict[str, int] = {}
    depth = max(len(pairs) for pairs in lines.values())
    codes = np.full((len(lines), depth), -1)
    scores = np.full((len(lines), depth), -np.inf)
    for i, pairs in enumerate(lines.values()):
        for j, (doc, value) in enumerate(pairs):
            codes[i, j], scores[i, j] = vocabulary.setdefault(doc, len(vocabulary)), value
    return Run.from_arrays(list(lines), list(vocabulary), codes, scores)


def distinct_scores(ranking: dict) -> dict[str, dict[str, float]]:
    return {q: {doc: float(len(docs) - i) for i, doc in enumerate(docs)} for q, docs in ranking.items()}


def ours(labels, lines, level, queries):
    """Our per-query values {metric: {query: value}} and means, from the raw lines (ties="score") after checking
    that the reference ranking given as is (ties="rank") scores the same."""
    qrels = Qrels.from_dict(labels)
    raw = score(qrels, our_run(lines), METRICS, rel_level=level, queries=queries)
    ranked = score(qrels, Run.from_dict(reference_ranking(lines)), METRICS, rel_level=level, ties="rank",
                   queries=queries)
    assert list(raw.query_ids) == list(ranked.query_ids)
    for metric in METRICS:
        np.testing.assert_allclose(raw.per_query[metric], ranked.per_query[metric], rtol=0, atol=1e-12, err_msg=metric)
    per_query = {m: dict(zip(raw.query_ids.tolist(), raw.per_query[m].tolist())) for m in METRICS}
    return per_query, raw.means


def assert_agree(mine: dict, means: dict, theirs: dict, tool: str):
    """theirs: {our metric: {query: value}}; per query and the mean over the same queries."""
    assert theirs, f"no metric compared with {tool}"
    for metric, by_query in theirs.items():
        assert set(by_query) == set(mine[metric]), (tool, metric, "query set")
        for query, value in by_query.items():
            assert mine[metric][query] == pytest.approx(value, abs=1e-9), (tool, metric, query)
        assert means[metric] == pytest.approx(float(np.mean(list(by_query.values()))), abs=1e-9), (tool, metric)


TREC = {"precision": "P_{k}", "recall": "recall_{k}", "hit_rate": "success_{k}", "ndcg": "ndcg_cut_{k}",
        "map": "map_cut_{k}"}
TREC_WHOLE = {"mrr": "recip_rank", "ndcg": "ndcg", "map": "map", "r_precision": "Rprec"}


_EVALUATION = itertools.count()


def fresh_ids(mapping: dict, tag: int) -> dict:
    """Query ids unique to one evaluation: trec_eval keeps per-query state keyed by query id beyond one evaluator
    (pytrec_eval, and ir_measures through it, can hang when the next evaluation has a query of the same name)."""
    return {f"{query}#{tag}": value for query, value in mapping.items()}


def no_negative_labels(labels: dict) -> dict:
    """Labels below 0 as 0, which changes none of our metrics (both are non-relevant with no gain). pytrec_eval
    hangs on a query whose labels are all negative once another evaluator has run in the process:
    RelevanceEvaluator({"a": {"x": 3}}, {"map"}).evaluate({"a": {"y": 0.5}}), then
    RelevanceEvaluator({"b": {"x": -1}}, {"ndcg", "recall.1", "recip_rank", "success.1"}).evaluate({"b": {"y": 0.0}})
    never returns. ranx and the golden trec_eval files still check negative labels."""
    return {query: {doc: max(label, 0) for doc, label in judged.items()} for query, judged in labels.items()}


def pytrec_eval_values(labels, lines, level):
    tag = next(_EVALUATION)
    best = {q: {doc: max(v for d, v in pairs if d == doc) for doc, _ in pairs} for q, pairs in lines.items()}
    ks = ",".join(map(str, CUTOFFS))
    measures = {f"{m}.{ks}" for m in ("P", "recall", "success", "ndcg_cut", "map_cut")} | set(TREC_WHOLE.values())
    evaluator = pytrec_eval.RelevanceEvaluator(fresh_ids(no_negative_labels(labels), tag), measures,
                                               relevance_level=level)
    result = evaluator.evaluate(fresh_ids(best, tag))
    names = {f"{f}@{k}": TREC[f].format(k=k) for f in TREC for k in CUTOFFS} | TREC_WHOLE
    return {ours_: {q.rpartition("#")[0]: values[name] for q, values in result.items()} for ours_, name in names.items()}


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
@SETTINGS
@given(cases())
def test_pytrec_eval_on_raw_tied_scores(case):
    labels, lines, level = case
    mine, means = ours(labels, lines, level, queries="both")  # pytrec_eval averages queries in qrels and run
    assert_agree(mine, means, pytrec_eval_values(labels, lines, level), "pytrec_eval")


RANX = {"ndcg_exp": "ndcg_burges"}


def ranx_values(labels, lines, level):
    names = {}
    for metric in METRICS:
        family, _, k = metric.partition("@")
        name = {"r_precision": "r-precision"}.get(family, RANX.get(family, family)) + (f"@{k}" if k else "")
        # ranx drops labels below the level before computing nDCG; trec_eval and we do not (docs/metrics.md)
        names[metric] = name if family in ("ndcg", "ndcg_exp") or level == 1 else f"{name}-l{level}"
    run = ranx.Run.from_dict(distinct_scores(reference_ranking(lines)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = ranx.evaluate(ranx.Qrels.from_dict(labels), run, list(names.values()), return_mean=False,
                               make_comparable=True)
    queries = run.get_query_ids()
    return {m: dict(zip(queries, np.asarray(values[name]).tolist())) for m, name in names.items()}


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
@SETTINGS
@given(cases())
def test_ranx_with_distinct_scores(case):
    labels, lines, level = case
    mine, means = ours(labels, lines, level, queries="all")  # ranx with make_comparable: every qrels query
    assert_agree(mine, means, ranx_values(labels, lines, level), "ranx")


def ir_measures_values(labels, lines, level):
    from ir_measures import AP, RR, P, R, Rprec, Success, nDCG

    measures = {"mrr": RR(rel=level), "ndcg": nDCG, "map": AP(rel=level), "r_precision": Rprec(rel=level)}
    for k in CUTOFFS:
        measures |= {f"precision@{k}": P(rel=level) @ k, f"recall@{k}": R(rel=level) @ k,
                     f"hit_rate@{k}": Success(rel=level) @ k, f"mrr@{k}": RR(rel=level) @ k,
                     f"ndcg@{k}": nDCG @ k, f"map@{k}": AP(rel=level) @ k}
    tag = next(_EVALUATION)
    run = fresh_ids(distinct_scores(reference_ranking(lines)), tag)
    by_measure = {measure: name for name, measure in measures.items()}
    values: dict[str, dict[str, float]] = {name: {} for name in measures}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for record in ir_measures.iter_calc(list(measures.values()), fresh_ids(no_negative_labels(labels), tag), run):
            values[by_measure[record.measure]][record.query_id.rpartition("#")[0]] = record.value
    return values


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
@SETTINGS
@given(cases())
def test_ir_measures_with_distinct_scores(case):
    labels, lines, level = case
    mine, means = ours(labels, lines, level, queries="all")  # ir_measures averages every qrels query
    assert_agree(mine, means, ir_measures_values(labels, lines, level), "ir_measures")


# Hand-picked cases: each is a trap one of the rules above exists for.
def test_ties_far_apart_in_the_row_follow_doc_id_order():
    labels = {"q": {"a": 1}}
    lines = {"q": [("a", 0.5), ("b", 0.7), ("z", 0.5)]}  # trec_eval ranks b, z, a
    mine, _ = ours(labels, lines, 1, queries="both")
    assert mine["mrr"]["q"] == pytest.approx(1 / 3)
    assert mine["mrr"] == pytrec_eval_values(labels, lines, 1)["mrr"]


def test_duplicate_docs_keep_their_best_occurrence():
    labels = {"q": {"a": 1, "b": 1}}
    lines = {"q": [("a", 0.1), ("c", 0.9), ("a", 0.8), ("b", 0.2), ("c", 0.3)]}  # ranks c, a, b
    mine, _ = ours(labels, lines, 1, queries="all")
    assert (mine["precision@3"]["q"], mine["mrr"]["q"]) == (pytest.approx(2 / 3), 0.5)
    assert mine["map"]["q"] == pytest.approx((1 / 2 + 2 / 3) / 2)


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
def test_ranx_thresholds_ndcg_labels_at_the_level_we_do_not():
    labels = {"q": {"a": 1, "b": 2}}
    lines = {"q": [("a", 2.0), ("b", 1.0)]}
    mine, _ = ours(labels, lines, 2, queries="all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx.evaluate(ranx.Qrels.from_dict(labels), ranx.Run.from_dict({"q": {"a": 2.0, "b": 1.0}}),
                               "ndcg@2-l2")
    assert mine["ndcg@2"]["q"] == pytest.approx(pytrec_eval_values(labels, lines, 2)["ndcg@2"]["q"])
    assert theirs == pytest.approx((2 / math.log2(3)) / 2)  # a (label 1) gains nothing in ranx at level 2
    assert mine["ndcg@2"]["q"] == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))


def test_ir_measures_rr_at_k_breaks_ties_by_ascending_doc_id():
    from ir_measures import RR

    labels, run = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}  # trec_eval order: b, a
    mine, _ = ours(labels, {"q": [("a", 1.0), ("b", 1.0)]}, 1, queries="all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ir_measures.calc_aggregate([RR @ 2, RR], labels, run)
    assert mine["mrr@2"]["q"] == mine["mrr"]["q"] == 0.5 == theirs[RR]
    assert theirs[RR @ 2] == 1.0


def test_pytrec_eval_compares_scores_as_float32():
    labels, lines = {"q": {"a": 1}}, {"q": [("a", 1.00000001), ("b", 1.0)]}  # equal in float32
    mine, _ = ours(labels, lines, 1, queries="both")
    assert mine["mrr"]["q"] == 1.0
    assert pytrec_eval_values(labels, lines, 1)["mrr"]["q"] == 0.5  # tie in float32, so b (higher id) first
