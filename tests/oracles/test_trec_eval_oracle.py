"""`score --trec-eval` against trec_eval 10.0's own loops, restated in plain Python one doc at a time (per query: sort
by score then doc id descending, cut at -M, one pass over the ranking per measure, as its m_*.c files do), on random
runs with score ties, unjudged and negative labels, missing and extra queries, every option. The outputs must be the
same lines, byte for byte: the vectorized code may order its arithmetic differently only where the printed digits
cannot tell."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pytest

from ragretrieval.scoring import trec_eval as te

NONPOOL, UNJUDGED = -1, -2
MEASURES = ["all_trec", "dcg", "ideal_dcg"]
WITH_PARAMS = ["P.3,1,40", "iprec_at_recall..33,.5,1", "Rprec_mult..5,1.5,3", "utility.2,-1,0.5,0", "11pt_avg.0,.5,1",
               "set_F.0.5", "success.2,50", "relative_P.1,3", "ndcg_cut.2,4", "map_cut.3", "map", "bpref",
               "relstring.4", "rbp.p=0.5", "rbp_resid.p=0.95", "unj.1,30"]


def lround(x: float) -> int:
    """C's lround: the nearest integer, halves away from zero (on the double's exact decimal value)."""
    return int(Decimal(x).to_integral_value(rounding=ROUND_HALF_UP))


def res_rels(qrels: dict, ranking: list, level: int, max_docs: int | None):
    """trec_eval's form_res_rels: each retrieved doc's label (-1 not judged, -2 judged below 0), in rank order."""
    ranked = sorted(ranking, key=lambda d: d[0].encode(), reverse=True)  # ties: doc id descending
    ranked = sorted(ranked, key=lambda d: -d[1])[: max_docs]
    rels = [NONPOOL if doc not in qrels else (UNJUDGED if qrels[doc] < 0 else qrels[doc]) for doc, _ in ranked]
    levels = [label for label in qrels.values() if label >= 0]
    return {"rels": rels, "num_ret": len(rels), "num_rel": sum(1 for g in levels if g >= level),
            "num_rel_ret": sum(1 for r in rels if r >= level), "levels": levels,
            "num_nonrel": sum(1 for g in levels if g < level)}


def at_cutoffs(rr, cutoffs, step):
    """trec_eval's cutoff loop: step(i, rel) at each rank, value() read at i == cutoff, then for cutoffs past the
    ranking."""
    out, state = [], {"rel": 0, "sum": 0.0}
    index = 0
    for i, rel in enumerate(rr["rels"]):
        if index < len(cutoffs) and i == cutoffs[index]:
            out.append(step(state, i, None))
            index += 1
        step(state, i, rel)
    while index < len(cutoffs):
        out.append(step(state, cutoffs[index], None))
        index += 1
    return out


def gain_levels(rr: dict) -> list[list]:
    """setup_gains with no parameters: [gain, count] for each label from 0 to the highest, lowest gain first."""
    top = max(rr["levels"], default=-1)
    return [[float(g), sum(1 for x in rr["levels"] if x == g)] for g in range(top + 1)]


def gain(rel: int) -> float:
    return float(rel) if rel >= 0 else 0.0


def ideal_walk(rr: dict):
    """trec_eval's walk down the ideal ranking: yields the ideal gain at each place, then 0 for ever."""
    levels, current, count = gain_levels(rr), None, 0
    current = len(levels) - 1
    while True:
        count += 1
        while current >= 0 and count > levels[current][1]:
            count, current = 1, current - 1
        yield levels[current][0] if current >= 0 else 0.0


def gain_measures(rr: dict, name: str) -> float:
    """G, ndcg_rel, Rndcg, dcg and ideal_dcg, each as its own loop over the ranking (m_G.c, m_ndcg_rel.c,
    m_Rndcg.c, m_ndcg.c)."""
    rels, n = rr["rels"], rr["num_ret"]
    levels = gain_levels(rr)
    walk = ideal_walk(rr)
    ideal_gain = levels[-1][0] if levels else 0.0
    results_dcg = ideal_dcg = results_g = sum_results = sum_ideal = sum_cost = total = 0.0
    num_rel = num_rel_ret = changes = 0
    old = ideal_gain
    i = 0
    if name == "Rndcg" and rr["num_rel"] == 0:
        return 0.0
    while i < n and ideal_gain > 0.0:
        g = gain(rels[i])
        if name in ("dcg", "ndcg_rel") and g != 0:
            results_dcg += g / math.log2(i + 2)
        ideal_gain = next(walk)
        if name == "G":
            sum_results += g
            sum_ideal += ideal_gain if ideal_gain > 0 else 0.0
            sum_cost += ideal_gain if ideal_gain >= 1.0 else 1.0
            if g != 0:
                results_g += g / math.log2(2 + sum_cost - sum_results)
        if name in ("ideal_dcg", "ndcg_rel") and ideal_gain > 0.0:
            num_rel += 1
            ideal_dcg += ideal_gain / math.log2(i + 2)
        if name == "ndcg_rel" and g > 0:
            total += results_dcg / ideal_dcg
            num_rel_ret += 1
        if name == "Rndcg":
            if old != ideal_gain:
                if ideal_dcg > 0.0:
                    total, changes = total + results_dcg / ideal_dcg, changes + 1
                old = ideal_gain
            if g != 0:
                results_dcg += g / math.log2(i + 2)
            if ideal_gain > 0.0:
                ideal_dcg += ideal_gain / math.log2(i + 2)
        i += 1
    if i < n:
        while i < n:
            g = gain(rels[i])
            if name in ("dcg", "ndcg_rel", "Rndcg") and g != 0:
                results_dcg += g / math.log2(i + 2)
            if name == "ndcg_rel" and g > 0:
                total += results_dcg / ideal_dcg
                num_rel_ret += 1
            if name == "G":
                sum_results += g
                sum_cost += 1.0
                if g != 0:
                    results_g += g / math.log2(2 + sum_cost - sum_results)
            i += 1
        if name == "Rndcg" and ideal_dcg > 0.0:
            total, changes = total + results_dcg / ideal_dcg, changes + 1
    while ideal_gain > 0.0:
        ideal_gain = next(walk)
        if name == "G" and ideal_gain > 0.0:
            sum_ideal += ideal_gain
        if name == "Rndcg" and old != ideal_gain:
            if ideal_dcg > 0.0:
                total, changes = total + results_dcg / ideal_dcg, changes + 1
            old = ideal_gain
        if name in ("ideal_dcg", "ndcg_rel", "Rndcg") and ideal_gain > 0.0:
            num_rel += 1
            ideal_dcg += ideal_gain / math.log2(i + 2)
        i += 1
    if name == "dcg":
        return results_dcg
    if name == "ideal_dcg":
        return ideal_dcg
    if name == "G":
        return results_g / sum_ideal if sum_ideal > 0.0 else 0.0
    if name == "Rndcg":
        return total / changes if changes else math.nan
    if ideal_dcg > 0.0:
        total += (num_rel - num_rel_ret) * results_dcg / ideal_dcg
    return total / num_rel if total > 0.0 else 0.0


def per_query(rr: dict, name: str, params, level: int, missing: bool) -> list[tuple[str, float]]:
    rels, n, r, m = rr["rels"], rr["num_ret"], rr["num_rel"], rr["num_rel_ret"]
    if name in ("G", "ndcg_rel", "Rndcg", "dcg", "ideal_dcg"):
        return [(name, gain_measures(rr, name))]
    if name == "relstring":
        chars = {NONPOOL: "-", UNJUDGED: "."}
        return [(name, "".join(chars.get(x, ">" if x > 9 else str(x)) for x in rels[: int(params[0])]))]
    if name == "unj":
        out = []
        for k in params:
            unj = sum(1 for x in rels[:k] if x < 0)
            out.append((f"unj_{k}", unj / k))
        return out
    if name in ("rbp", "rbp_resid"):
        p, top = params[0], max(rr["levels"], default=-1)
        total, cur, unj = 0.0, 1.0, 0
        for x in rels:
            if name == "rbp" and gain(x) != 0:
                total += (gain(x) / top if top > 1 else gain(x)) * cur
            if name == "rbp_resid" and x < 0:
                unj, total = unj + 1, total + cur
            cur = cur * p
        return [(name, (1.0 - p) * total if name == "rbp" else (cur + (1 - p) * total if unj else 0.0))]
    if name == "binG":
        total, so_far = 0.0, 0
        for i, x in enumerate(rels):
            if x >= level:
                so_far += 1
                total += 1.0 / math.log2(3 + i - so_far)
        return [(name, total / r if so_far else 0.0)]
    if name == "infAP":
        value, nonrel, pooled, so_far = 0.0, 0, 0, 0
        for j, x in enumerate(rels):
            if x == NONPOOL:
                continue
            if x == UNJUDGED:
                pooled += 1
                continue
            if x < level:
                nonrel += 1
                continue
            so_far += 1
            if j == 0:
                value += 1.0
            else:
                fj = float(j)
                value += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((so_far - 1 + nonrel + pooled) / fj) * (
                    (so_far - 1 + 0.00001) / (so_far - 1 + nonrel + 2 * 0.00001))
        return [(name, value / r if r else value)]
    if name in ("num_ret", "num_rel", "num_rel_ret"):
        return [(name, {"num_ret": n, "num_rel": r, "num_rel_ret": m}[name])]
    if name == "num_nonrel_judged_ret":
        return [(name, sum(1 for x in rels if 0 <= x < level))]
    if name in ("map", "gm_map"):
        total, so_far = 0.0, 0
        for i, rel in enumerate(rels):
            if rel >= level:
                so_far += 1
                total += so_far / (i + 1)
        ap = total / r if so_far else 0.0
        return [(name, ap if name == "map" else math.log(max(ap, 0.00001)))]
    if name == "Rprec":
        look = min(n, r)
        return [(name, sum(1 for x in rels[:look] if x >= level) / r if look else 0.0)]
    if name in ("bpref", "gm_bpref"):
        value, nonrel, so_far = 0.0, 0, 0
        for rel in rels:
            if rel < 0:
                continue
            if rel < level:
                nonrel += 1
            else:
                value += 1.0 - min(nonrel, r) / min(rr["num_nonrel"], r) if nonrel else 1.0
        value = value / r if r else value
        return [(name, value if name == "bpref" else math.log(max(value, 0.00001)))]
    if name == "recip_rank":
        first = next((i for i, x in enumerate(rels) if x >= level), None)
        return [(name, 1.0 / (first + 1) if first is not None else 0.0)]
    if name in ("iprec_at_recall", "11pt_avg"):
        cuts = [lround(x * r) for x in params]
        values = [0.0] * len(params)
        current = len(cuts) - 1
        while current >= 0 and cuts[current] > m:
            current -= 1
        best = m / n if n else 0.0
        so_far, total = m, 0.0
        for i in range(n, 0, -1):
            if so_far <= 0:
                break
            best = max(best, so_far / i)
            if rels[i - 1] >= level:
                while current >= 0 and so_far == cuts[current]:
                    values[current] = best
                    total += best
                    current -= 1
                so_far -= 1
        while current >= 0:
            values[current] = best
            total += best
            current -= 1
        if name == "11pt_avg":
            return [(name, total / len(params))]
        return [(f"{name}_{x:3.2f}", v) for x, v in zip(params, values)]
    if name in ("P", "recall", "relative_P", "success"):
        def step(state, i, rel):
            if rel is None:
                hits = state["rel"]
                if name == "P":
                    return hits / i
                if name == "success":
                    return 1.0 if hits else 0.0
                if r == 0:
                    return 0.0
                return hits / r if name == "recall" else hits / (r if i > r else i)
            state["rel"] += rel >= level
        return [(f"{name}_{k}", v) for k, v in zip(params, at_cutoffs(rr, params, step))]
    if name == "map_cut":
        def step(state, i, rel):
            if rel is None:
                return state["sum"] / r if r else 0.0
            if rel >= level:
                state["rel"] += 1
                state["sum"] += state["rel"] / (i + 1)
        return [(f"{name}_{k}", v) for k, v in zip(params, at_cutoffs(rr, params, step))]
    if name in ("ndcg", "ndcg_cut"):
        ideal = sorted((g for g in rr["levels"] if g > 0), reverse=True)
        def dcg(gains, k):
            return sum((g / math.log2(i + 2) for i, g in enumerate(gains[:k]) if g > 0), 0.0)
        gains = [max(x, 0) for x in rels]
        cuts = params if name == "ndcg_cut" else [None]
        values = [dcg(gains, k) / dcg(ideal, k) if dcg(ideal, k) > 0 else 0.0 for k in cuts]
        return [(f"{name}_{k}" if k else name, v) for k, v in zip(cuts, values)]
    if name == "Rprec_mult":
        out = []
        for x in params:
            cut = int(x * r + 0.9)
            hits = sum(1 for rel in rels[:cut] if rel >= level)
            out.append((f"{name}_{x:3.2f}", hits / cut if cut else 0.0))
        return out
    if name == "utility":
        p1, p2, p3, p4 = params
        return [(name, 0.0 if missing else p1 * m + p2 * (n - m) + p3 * (r - m) + p4 * (0 + m - n - r))]
    if name.startswith("set_"):
        p = m / n if n else 0.0
        if name == "set_F":
            return [(name, ((params[0] + 1) * p * (m / r) / (params[0] * p + m / r)) if m else 0.0)]
        value = {"set_P": p, "set_recall": m / r if r else 0.0, "set_relative_P": m / min(n, r) if n and r else 0.0,
                 "set_map": (m * m) / (n * r) if n and r else 0.0}[name]
        return [(name, value)]
    raise AssertionError(name)


def reference(qrels: dict, run: dict, tag: str, arguments, per_query_wanted, complete, max_docs, level):
    measures = te.parse_measures(arguments)
    queries = sorted((q for q in qrels if complete or q in run), key=str.encode)
    rows = {q: res_rels(qrels[q], run.get(q, []), level, max_docs) for q in queries}
    values = {q: {m.name: per_query(rows[q], m.name, m.params, level, q not in run) for m in measures
                  if m.name not in ("runid", "num_q")} for q in queries}
    out = []
    def printed(name, q, v, counted):
        if isinstance(v, str):
            return f"{name:<22}\t{q}\t'{v}'"
        if v != v:
            return f"{name:<22}\t{q}\t  -nan"
        return f"{name:<22}\t{q}\t{int(v)}" if counted else f"{name:<22}\t{q}\t{v:6.4f}"

    for q in queries if per_query_wanted else []:
        for m in measures:
            if m.name not in ("runid", "num_q", "gm_map", "gm_bpref"):
                named = [(te.KINDS[m.name].counted, n, v) for n, v in values[q][m.name]]
                typed = m.typed and te.KINDS[m.name].params in ("params", "p")
                out += [printed(f"{m.name}_{m.typed}" if typed else n, q, v, c) for c, n, v in named]
    for m in measures:
        if m.name == "runid":
            out.append(f"{'runid':<22}\tall\t{tag}")
            continue
        if m.name == "num_q":
            out.append(printed("num_q", "all", len(queries), True))
            continue
        if m.name == "num_rel" and complete:
            out.append(printed("num_rel", "all", sum(1 for j in qrels.values() for g in j.values() if g > 0), True))
            continue
        if m.name == "relstring":  # printed for each query only
            continue
        for index, (name, _) in enumerate(values[queries[0]][m.name]):
            if te.KINDS[m.name].params in ("params", "p") and m.typed:
                name = f"{m.name}_{m.typed}"
            total = 0.0
            for q in queries:
                total += values[q][m.name][index][1]
            if te.KINDS[m.name].counted:
                out.append(printed(name, "all", total, True))
            elif m.name in ("gm_map", "gm_bpref"):
                out.append(printed(name, "all", math.exp(total / len(queries)), False))
            else:
                out.append(printed(name, "all", total / len(queries), False))
    return out


def random_case(seed: int):
    rng = np.random.default_rng(seed)
    docs = [f"{p}{i}" for i, p in enumerate(rng.choice(["d", "D-", "é", "doc"], 300))]
    qrels, run = {}, {}
    for _ in range(int(rng.integers(3, 25))):
        qid = str(int(rng.integers(0, 10 ** int(rng.integers(1, 4)))))
        judged = rng.choice(len(docs), int(rng.integers(1, 15)), replace=False)
        qrels[qid] = {docs[d]: int(rng.integers(-1, 4)) for d in judged}
        if rng.random() < 0.85:
            found = judged[: int(rng.integers(0, len(judged) + 1))].tolist()  # some judged docs are retrieved
            others = rng.choice(len(docs), int(rng.integers(0, 60)), replace=False).tolist()
            retrieved = list(dict.fromkeys(found + others)) or [0]
            retrieved = [retrieved[i] for i in rng.permutation(len(retrieved))]
            scores = np.round(rng.random(len(retrieved)) * 3, int(rng.integers(0, 3)))  # ties
            run[qid] = [(docs[d], float(s)) for d, s in zip(retrieved, scores)]
    run["unjudged-query"] = [("d1", 1.0)]
    # every label 0 (relevant at -l0, with no gain: Rndcg's 0/0), retrieved or, every other seed, missing (-c)
    qrels["zeros"] = {docs[0]: 0, docs[1]: 0, docs[2]: -1}
    if seed % 2:
        run["zeros"] = [(docs[5], 3.0), (docs[1], 2.0), (docs[6], 1.0)]
    return qrels, run


def write_files(tmp_path, qrels, run, tag):
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, judged in qrels.items() for d, g in judged.items()))
    run_path.write_text("".join(f"{q} Q0 {d} {i} {s!r} {tag}\n" for q, ranking in run.items()
                                for i, (d, s) in enumerate(ranking, start=1)))
    return qrels_path, run_path


@pytest.mark.parametrize("seed", range(12))
def test_every_computed_measure_prints_as_trec_evals_loops_print_it(tmp_path, seed):
    qrels, run = random_case(seed)
    qrels_path, run_path = write_files(tmp_path, qrels, run, f"run{seed}")
    rng = np.random.default_rng(100 + seed)
    for arguments in (MEASURES, WITH_PARAMS):
        for _ in range(3):
            per_query_wanted, complete = bool(rng.random() < 0.7), bool(rng.random() < 0.5)
            max_docs = int(rng.integers(1, 40)) if rng.random() < 0.4 else None
            level = int(rng.integers(0, 4))
            got = list(te.evaluate(qrels_path, run_path, te.parse_measures(arguments), per_query=per_query_wanted,
                                   complete=complete, max_docs=max_docs, level=level))
            expected = reference(qrels, run, f"run{seed}", arguments, per_query_wanted, complete, max_docs, level)
            assert got == expected, (arguments, per_query_wanted, complete, max_docs, level)


TREC_FILES = Path(__file__).parents[1] / "data" / "trec_eval"


def test_trec_evals_own_files_at_l0_with_a_topic_judged_all_0(tmp_path):
    """qrels.test and results.test, plus topic 304: 303's judged docs all labelled 0, and 303's ranking. With
    `-m all_trec -q -l0`, every line is the loops' line; 304 is where trec_eval prints Rndcg's -nan, and so does the
    mean over all (these two lines printed 0.0000 and a number)."""
    qrels: dict = {}
    for line in (TREC_FILES / "qrels.test").read_text().splitlines():
        query, _, doc, label = line.split()
        qrels.setdefault(query, {})[doc] = int(label)
    run: dict = {}
    for line in (TREC_FILES / "results.test").read_text().splitlines():
        query, _, doc, _, sim, tag = line.split()[:6]
        run.setdefault(query, []).append((doc, float(sim)))
    qrels["304"], run["304"] = dict.fromkeys(qrels["303"], 0), list(run["303"])
    qrels_path, run_path = write_files(tmp_path, qrels, run, tag)
    got = list(te.evaluate(qrels_path, run_path, te.parse_measures(["all_trec"]), per_query=True, level=0))
    assert got == reference(qrels, run, tag, ["all_trec"], True, False, None, 0)
    assert [line for line in got if line.endswith("-nan")] == ["Rndcg                 \t304\t  -nan",
                                                               "Rndcg                 \tall\t  -nan"]
