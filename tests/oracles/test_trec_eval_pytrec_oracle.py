"""`score --trec-eval`'s per-query values against pytrec_eval, which runs trec_eval's own C code, on random small
qrels and runs: labels 0 only, negative labels (-1, -2: in the pool, not judged), docs the qrels do not judge,
queries the run lacks and run queries the qrels lack, score ties, every relevance level.

pytrec_eval takes no `relevance_level` of 0, so -l0 is checked through what trec_eval's C code does with it: a
measure that reads relevance only (label >= level) sees at -l0 what it sees at -l1 once every label >= 0 is raised by
1 (negative labels kept), and a gain measure reads the labels themselves, never the level, but for one test in
m_Rndcg.c: `num_rel == 0` gives 0, so at -l0 a query whose judged labels are all 0 has relevant docs, no gain, and
Rndcg's 0/0, NaN (printed `-nan`, and `-nan` for all).

Left out: relstring (a string, not a value pytrec_eval returns), iprec_at_recall and 11pt_avg (pytrec_eval 0.5.11
embeds trec_eval 9.0.8, which turns a recall fraction into a number of docs as (long)(x R + 0.9); 10.0 rounds, and
its own test files, tests/scoring/test_trec_golden.py, are what those two are checked against), rbp, rbp_resid and
unj (not in 9.0.8).
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragretrieval.scoring import trec_eval as te

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTS = "1,2,5"
MEASURES = [f"{name}.{CUTS}" for name in ("P", "recall", "success", "ndcg_cut", "map_cut", "relative_P")] + [
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "gm_bpref", "recip_rank", "infAP",
    "Rprec_mult", "utility", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "set_P", "set_relative_P", "set_recall",
    "set_map", "set_F", "num_nonrel_judged_ret"]
GAINS = ("G", "ndcg", "ndcg_cut", "ndcg_rel", "Rndcg")  # measures that read labels as gains, not the level
DOCS = ["a", "B", "b", "c1", "c10", "c2", "Z", "z9", "d"]  # byte order differs from a naive one
SCORES = [0.0, 0.5, 1.0, 1.5, 2.25]  # exact in float32 (pytrec_eval's score type), and tied often
LABELS = [-2, -1, 0, 0, 1, 2, 3]
_EVALUATION = itertools.count()


@st.composite
def cases(draw):
    """(qrels, run, level): 1-4 judged queries, each with a label >= 0 (pytrec_eval can hang on a query whose
    labels are all negative, see tests/scoring/test_agreement.py), some all 0; most retrieved, from judged and
    unjudged docs; and one run query the qrels lack."""
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 4))):
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
        all_zero = draw(st.integers(0, 3)) == 0
        labels = [0 if all_zero else draw(st.sampled_from(LABELS)) for _ in judged]
        labels[0] = max(labels[0], 0)
        qrels[f"q{q}"] = dict(zip(judged, labels))
        if draw(st.integers(0, 4)):  # 1 in 5 is missing from the run
            retrieved = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=7, unique=True))
            run[f"q{q}"] = {doc: draw(st.sampled_from(SCORES)) for doc in retrieved}
    if not run:
        run["q0"] = {"a": 1.0}
    run["extra"] = {"a": 1.0}
    return qrels, run, draw(st.sampled_from([0, 1, 2, 3]))


def pytrec_values(qrels: dict, run: dict, level: int, shift: bool) -> dict:
    """{printed name: {query: value}} from pytrec_eval, with query ids of their own: trec_eval caches a query's
    ranking by its id across evaluators."""
    tag = f"#{next(_EVALUATION)}"
    if shift:
        qrels = {q: {d: g + 1 if g >= 0 else g for d, g in judged.items()} for q, judged in qrels.items()}
    evaluator = pytrec_eval.RelevanceEvaluator({q + tag: j for q, j in qrels.items()}, set(MEASURES),
                                               relevance_level=level)
    values = {}
    for query, measures in evaluator.evaluate({q + tag: r for q, r in run.items()}).items():
        for name, value in measures.items():
            values.setdefault(name, {})[query.removesuffix(tag)] = value
    return values


def expected(qrels: dict, run: dict, level: int) -> dict:
    """What trec_eval 10.0 gives at `level`, from pytrec_eval (see the module's docstring for -l0)."""
    if level > 0:
        return pytrec_values(qrels, run, level, shift=False)
    relevance, gains = pytrec_values(qrels, run, 1, shift=True), pytrec_values(qrels, run, 1, shift=False)
    values = {name: (gains if name.startswith(GAINS) else relevance)[name] for name in relevance}
    for query, judged in qrels.items():
        if query in values["Rndcg"] and max(judged.values()) == 0:  # relevant at -l0, no gain
            values["Rndcg"][query] = math.nan
    return values


def write(folder, qrels: dict, run: dict):
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, judged in qrels.items() for d, g in judged.items()))
    run_path.write_text("".join(f"{q} Q0 {d} {rank} {s} tag\n" for q, ranking in run.items()
                                for rank, (d, s) in enumerate(ranking.items(), start=1)))
    return qrels_path, run_path


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_values_are_pytrec_evals(tmp_path, case):
    qrels, run, level = case
    files = write(tmp_path, qrels, run)
    measures = te.parse_measures(MEASURES)
    ours = te.per_query_values(*files, measures, level=level)
    reference = expected(qrels, run, level)
    assert set(ours) == set(reference)
    for name, values in reference.items():
        assert set(ours[name]) == set(values), name  # the queries in both files
        for query, value in values.items():
            assert same(ours[name][query], value), (name, query, ours[name][query], value, level)
    # where a value is NaN, trec_eval prints -nan, for the query and for the mean over all queries
    nans = [(name, query) for name, values in reference.items() for query, value in values.items() if value != value]
    lines = set(te.evaluate(*files, measures, per_query=True, level=level)) if nans else set()
    for name, query in nans:
        assert f"{name:<22}\t{query}\t  -nan" in lines and f"{name:<22}\tall\t  -nan" in lines


def test_l0_and_a_query_labelled_all_0_is_among_the_cases(tmp_path):
    """The corner the -l0 rule is for, checked once by name: q1's labels are all 0."""
    qrels = {"q1": {"d1": 0, "d2": 0, "d3": 0}, "q2": {"e1": 1}}
    run = {"q1": {"x1": 3.0, "d1": 2.0, "x2": 1.0}, "q2": {"e1": 1.0}}
    files = write(tmp_path, qrels, run)
    ours = te.per_query_values(*files, te.parse_measures(["Rndcg", "ndcg", "P.2"]), level=0)
    assert math.isnan(ours["Rndcg"]["q1"]) and ours["Rndcg"]["q2"] == 1.0
    assert ours["ndcg"]["q1"] == 0.0 and ours["P_2"]["q1"] == 0.5  # relevant at -l0, with no gain
    reference = expected(qrels, run, 0)
    assert math.isnan(reference["Rndcg"]["q1"]) and reference["P_2"]["q1"] == 0.5
