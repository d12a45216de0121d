"""trec_eval's interface: its measure names and parameters (``-m P.5,10``, ``-m official``), its options (-q, -c, -n,
-M, -l) and its output, three tab-separated columns, byte for byte (``ragretrieval score --trec-eval``).

What trec_eval 10.0 does and this module does the same way: measures print in trec_eval's own order, whatever the
order of -m; ``-m name.params`` sets a measure's cutoffs (the first -m naming it wins; long cutoffs are read as C's
atol reads them, so ``23.4`` is 23, then sorted); per-query lines come query by query, queries in byte order of their
ids, then the summary over "all"; the summary of a measure is the sum of the per-query values in that order over the
number of queries (the queries in both files, or every qrels query with -c, a query the run lacks counting 0);
num_ret, num_rel, num_rel_ret and num_nonrel_judged_ret are summed, not averaged; gm_map and gm_bpref are geometric
means (values floored at 0.00001) printed in the summary only; runid is the tag of the run's last line. A doc listed
twice in one ranking is refused, as trec_eval refuses it. Measures named here but not computed are refused in one
message; see docs/metrics.md, "trec_eval's interface".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from ..errors import InputError
from . import trec_eval_gains as tg
from . import trec_eval_measures as tm
from .stream import rank_file
from .trec import read_qrels
from .types import ScoringError

# trec_eval 10.0's measures, in the order it computes and prints them
ALL_MEASURES = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG",
    "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "prefs_num_prefs_poss",
    "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
    "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap", "rbp",
    "rbp_resid", "unj",
)
_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
             "iprec_at_recall", "P")
NICKNAMES = {
    "official": _OFFICIAL,
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall", "set_relative_P",
            "set_map", "set_F"),
    "all_trec": _OFFICIAL + (
        "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg",
        "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
    "all_prefs": ("runid", "num_q") + tuple(m for m in ALL_MEASURES if m.startswith("prefs_")),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_simp", "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}
_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class _Kind:
    """How a measure takes parameters and prints: "long" cutoffs, "double" cutoffs, "params" (doubles kept in the
    order given), or none; `counted` values print as integers and sum; `summary_only` ones print in the summary only
    (`geometric`: as a geometric mean)."""

    params: str | None = None
    default: tuple = ()
    counted: bool = False
    summary_only: bool = False
    geometric: bool = False
    text: bool = False  # relstring: a string per query, no summary


_COUNT, _VALUE, _GEOMETRIC = _Kind(counted=True), _Kind(), _Kind(summary_only=True, geometric=True)
# the measures computed here; every other name of ALL_MEASURES is refused
KINDS = {
    "runid": _Kind(summary_only=True), "num_q": _Kind(summary_only=True, counted=True), "num_ret": _COUNT,
    "num_rel": _COUNT, "num_rel_ret": _COUNT, "map": _VALUE, "gm_map": _GEOMETRIC, "Rprec": _VALUE, "bpref": _VALUE,
    "recip_rank": _VALUE, "iprec_at_recall": _Kind("double", _ELEVEN), "P": _Kind("long", _CUTOFFS),
    "recall": _Kind("long", _CUTOFFS), "gm_bpref": _GEOMETRIC,
    "Rprec_mult": _Kind("double", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    "utility": _Kind("params", (1.0, -1.0, 0.0, 0.0)), "11pt_avg": _Kind("params", _ELEVEN), "ndcg": _VALUE,
    "ndcg_cut": _Kind("long", _CUTOFFS), "map_cut": _Kind("long", _CUTOFFS), "relative_P": _Kind("long", _CUTOFFS),
    "success": _Kind("long", (1, 5, 10)), "set_P": _VALUE, "set_relative_P": _VALUE, "set_recall": _VALUE,
    "set_map": _VALUE, "set_F": _Kind("params", (1.0,)), "num_nonrel_judged_ret": _COUNT,
    "relstring": _Kind("params", (10.0,), text=True), "infAP": _VALUE, "binG": _VALUE, "G": _VALUE,
    "ndcg_rel": _VALUE, "Rndcg": _VALUE, "rbp": _Kind("p", (0.9,)), "rbp_resid": _Kind("p", (0.9,)),
    "dcg": _VALUE, "ideal_dcg": _VALUE,
    "unj": _Kind("long", (5, 10, 20)),
}
_OURS = {"map": "map", "Rprec": "r_precision", "recip_rank": "mrr", "ndcg": "ndcg", "P": "precision",
         "recall": "recall", "ndcg_cut": "ndcg", "map_cut": "map", "success": "hit_rate"}


class TrecEvalError(ScoringError):
    """Files trec_eval's interface has nothing to print for, or (`MeasureError`) a measure it cannot take here."""


class MeasureError(TrecEvalError, InputError):
    """A measure, parameter or option trec_eval's interface cannot take here: the command must change (exit 2)."""


@dataclass(frozen=True)
class Measure:
    """A measure to print: its name, its parameters (trec_eval's defaults unless -m gave some) and, for measures
    that take doubles, the parameters as typed (they become part of the printed name)."""

    name: str
    params: tuple = ()
    typed: str | None = None


def parse_measures(arguments) -> list[Measure]:
    """``-m`` arguments (``P.5,10``, ``official``, ``map``) -> the measures to print, in trec_eval's order; no
    argument means ``official``. Every name trec_eval knows that is not computed here, and every name it does not
    know, is refused in one `MeasureError`."""
    marked: set[str] = set()
    given: dict[str, Any] = {}
    unknown: list[str] = []
    for argument in arguments or ["official"]:
        name, dot, params = str(argument).partition(".")
        if dot and not params:
            raise MeasureError(f"measure {argument!r}: no parameters after the '.' (trec_eval: improper measure)")
        if dot:
            given.setdefault(name, params)  # the first -m naming a measure gives its parameters, as in trec_eval
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in ALL_MEASURES:
            marked.add(name)
        else:
            unknown.append(argument)
    refused = [name for name in ALL_MEASURES if name in marked and name not in KINDS]
    gain_valued = [name for name in _GAIN_MEASURES if name in marked and name in given]
    refused += [f"{name}.{given[name]} (gain values)" for name in gain_valued]
    if refused or unknown:
        raise MeasureError(_refusal(refused, unknown, marked - set(gain_valued), given))
    return [_measure(name, given.get(name)) for name in ALL_MEASURES if name in marked]


_GAIN_MEASURES = ("ndcg", "G", "ndcg_rel", "Rndcg", "dcg", "ideal_dcg")  # their parameters are gain values


def _refusal(refused: list[str], unknown: list[str], wanted: set, given: dict) -> str:
    parts = []
    if refused:
        parts.append(f"trec_eval measures not computed by ragretrieval: {', '.join(refused)}")
    if unknown:
        parts.append(f"not trec_eval measures: {', '.join(map(repr, unknown))}")
    computed = [name for name in ALL_MEASURES if name in wanted and name in KINDS]
    if computed:  # what the user asked for, less what is refused, with the parameters given: ready to paste
        pasted = " ".join(f"-m {name}.{given[name]}" if name in given else f"-m {name}" for name in computed)
        return "; ".join(parts) + f"; the others asked for: {pasted}"
    return "; ".join(parts) + f"; ragretrieval computes: {', '.join(KINDS)}"


def _measure(name: str, typed: str | None) -> Measure:
    kind = KINDS[name]
    if typed is None or kind.params is None:
        return Measure(name, kind.default)
    pieces = typed.split(",")
    if kind.params == "p":  # rbp's persistence, "p=0.95" (its gain values are not taken)
        if len(pieces) != 1 or not pieces[0].startswith("p="):
            raise MeasureError(f"measure {name}.{typed}: only the persistence is taken, as p=VALUE (gain values "
                                f"are not computed by ragretrieval)")
        return Measure(name, (_atof(pieces[0][2:]),), typed)
    if kind.params == "long":
        cutoffs = sorted(_atol(piece) for piece in pieces)
        if cutoffs[0] <= 0:
            raise MeasureError(f"measure {name}.{typed}: cutoffs must be positive integers")
        if cutoffs[-1] > C_LONG_MAX:  # C's atol would clamp it and trec_eval print another measure than asked
            raise MeasureError(f"measure {name}.{typed}: cutoff {cutoffs[-1]} is past the largest trec_eval takes "
                                f"({C_LONG_MAX})")
        values: tuple[float, ...] = tuple(cutoffs)
    else:
        values = tuple(_atof(piece) for piece in pieces)
        if kind.params == "double":
            values = tuple(sorted(values))
    if kind.params != "params" and len(set(values)) != len(values):
        raise MeasureError(f"measure {name}.{typed}: a cutoff is given twice")
    if name == "utility" and len(values) != 4:
        raise MeasureError(f"measure utility.{typed}: takes exactly 4 coefficients, got {len(values)}")
    if name == "11pt_avg" and list(values) != sorted(values):  # trec_eval pairs them with the wrong recalls then
        raise MeasureError(f"measure 11pt_avg.{typed}: give the recall fractions in increasing order")
    return Measure(name, values, typed)


_LONG = re.compile(r"\s*([+-]?\d+)")
_DOUBLE = re.compile(r"\s*([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))")


C_LONG_MAX = 2**63 - 1


def _atol(text: str) -> int:
    """C's atol: the leading integer, 0 when there is none ("23.4" is 23); not clamped to a C long, so that a cutoff
    past it is refused rather than changed."""
    match = _LONG.match(text)
    return int(match[1]) if match else 0


def _atof(text: str) -> float:
    """C's atof on decimals: the leading number, 0.0 when there is none."""
    match = _DOUBLE.match(text)
    return float(match[1]) if match else 0.0


def evaluate(qrels_path, run_path, measures: list[Measure], *, per_query: bool = False, complete: bool = False,
             summary: bool = True, max_docs: int | None = None, level: int = 1, interleaved: str = "group"):
    """trec_eval's output lines for `measures` (`parse_measures`), as a generator (a run of a million queries with
    `per_query` prints tens of millions): with `per_query` (-q) each query's lines first; `complete` (-c) averages
    over every qrels query; `summary` False (-n) leaves out the "all" lines; `max_docs` (-M) keeps the first docs of
    each ranking; `level` (-l) is the lowest relevant label (0 makes every judged doc relevant); `interleaved` as
    for `score_files`. Every error is raised before the first line."""
    qrels, ranked, order, columns = _evaluated(qrels_path, run_path, measures, complete, max_docs, level, interleaved)
    summaries = (line for measure, values in columns
                 for line in _summary(measure, values, order, ranked.tag, qrels, level, complete))
    return chain(_per_query(columns, order, qrels.query_ids) if per_query else (), summaries if summary else ())


def per_query_values(qrels_path, run_path, measures: list[Measure], *, complete: bool = False,
                     max_docs: int | None = None, level: int = 1) -> dict[str, dict[str, float | str]]:
    """The values `evaluate` prints for each query, unrounded: {printed name: {query id: value}} (NaN where trec_eval
    prints -nan; gm_map and gm_bpref as the logs their geometric mean averages; relstring as its string)."""
    qrels, _, order, columns = _evaluated(qrels_path, run_path, measures, complete, max_docs, level, "group")
    ids = [str(qrels.query_ids[i]) for i in order]
    return {name: dict(zip(ids, (column[i] if isinstance(column, list) else float(column[i]) for i in order)))
            for _, values in columns for name, column in values}


def _evaluated(qrels_path, run_path, measures, complete, max_docs, level, interleaved):
    """(qrels, ranked run, the evaluated queries in print order, (measure, [(printed name, values)]) per measure)."""
    if max_docs is not None and (isinstance(max_docs, bool) or not isinstance(max_docs, int) or max_docs < 1):
        raise MeasureError(f"max_docs (-M) must be a positive integer, got {max_docs!r}")
    if isinstance(level, bool) or not isinstance(level, int) or level < 0:
        raise MeasureError(f"level (-l) must be an integer >= 0, got {level!r}")
    qrels = read_qrels(qrels_path)
    ranked = rank_file(qrels, run_path, duplicates="error", depth=max_docs, min_label=None, lengths=True,
                       interleaved=interleaved)
    if ranked.tag is None:
        raise TrecEvalError(f"{run_path}: no results in the run file")
    evaluated = np.ones(qrels.n_queries, bool) if complete else ranked.in_run
    if not evaluated.any():
        raise TrecEvalError(f"no queries with both results ({run_path}) and relevance judgements ({qrels_path})")
    assert ranked.lengths is not None  # lengths=True above: every ranking's length is counted
    judged = tm.Judged(qrels, ranked.ranks, ranked.lengths, level)
    order = sorted(np.flatnonzero(evaluated).tolist(), key=lambda i: str(qrels.query_ids[i]).encode("utf-8",
                                                                                                    "surrogatepass"))
    columns = [(measure, _values(judged, measure, ranked.in_run)) for measure in measures]
    return qrels, ranked, order, columns


def _per_query(columns, order, query_ids):
    printed = [(KINDS[measure.name].counted, values) for measure, values in columns
               if not KINDS[measure.name].summary_only]
    for i in order:
        query = query_ids[i]
        for counted, values in printed:
            for name, column in values:
                yield _line(name, query, column[i], counted)


def _line(name: str, query, value, counted: bool) -> str:
    if isinstance(value, str):  # relstring
        return f"{name:<22}\t{query}\t'{value}'"
    if counted:
        return f"{name:<22}\t{query}\t{int(value)}"
    if value != value:  # NaN (Rndcg of a query with no gain at -l0), as glibc prints x86's 0/0
        return f"{name:<22}\t{query}\t{'-nan':>6}"
    return f"{name:<22}\t{query}\t{value:6.4f}"


def _summary(measure: Measure, values, order: list[int], tag: str, qrels, level: int, complete: bool) -> list[str]:
    kind = KINDS[measure.name]
    if measure.name == "runid":
        return [f"{'runid':<22}\tall\t{tag}"]
    if measure.name == "num_q":
        return [_line("num_q", "all", len(order), True)]
    if measure.name == "num_rel" and complete:  # trec_eval counts every label > 0 then, whatever the level
        return [_line("num_rel", "all", int(np.count_nonzero(qrels.labels > 0)), True)]
    if kind.text:
        return []
    lines = []
    for name, column in values:
        chosen = column[order]
        if kind.counted:
            lines.append(_line(name, "all", int(chosen.sum()), True))
        elif kind.geometric:
            lines.append(_line(name, "all", tm.geometric_mean(chosen), False))
        else:  # summed in query order, one addition after another, as trec_eval adds
            lines.append(_line(name, "all", float(np.add.accumulate(chosen)[-1]) / len(chosen), False))
    return lines


def _values(judged: tm.Judged, measure: Measure, in_run: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """(printed name, value per qrels query) for each value the measure prints."""
    name, params = measure.name, measure.params
    kind = KINDS[name]
    if name in ("runid", "num_q"):
        return []
    if kind.params == "long":
        family = _OURS.get(name)
        if family is not None:
            columns = [judged.metric(family, k) for k in params]
        else:
            columns = (tm.relative_precision if name == "relative_P" else tm.unjudged)(judged, params)
        return [(f"{name}_{k}", column) for k, column in zip(params, columns)]
    if kind.params == "double":
        compute = tm.iprec_at_recall if name == "iprec_at_recall" else tm.rprec_mult
        return [(f"{name}_{x:3.2f}", column) for x, column in zip(params, compute(judged, params))]
    printed = name if measure.typed is None else f"{name}_{measure.typed}"
    if name in ("relstring", "G", "ndcg_rel", "Rndcg", "rbp", "rbp_resid", "dcg", "ideal_dcg"):
        return [(printed, _along_rankings(judged, name, params))]
    return [(printed, _single(judged, name, params, in_run))]


def _along_rankings(judged: tm.Judged, name: str, params):
    if name == "relstring":
        return tg.relstring(judged, int(params[0]))
    if name == "rbp_resid":
        return tg.rbp_resid(judged, params[0])
    gains = judged.gains()
    if name == "rbp":
        return tg.rbp(gains, params[0])
    return {"G": tg.g_measure, "ndcg_rel": tg.ndcg_rel, "Rndcg": tg.rndcg, "dcg": tg.dcg,
            "ideal_dcg": tg.ideal_dcg}[name](gains)


def _single(judged: tm.Judged, name: str, params, in_run) -> np.ndarray:
    counts = {"num_ret": judged.num_ret, "num_rel": judged.num_rel, "num_rel_ret": judged.num_rel_ret}
    if name in counts:
        return counts[name].astype(np.float64)
    if name in _OURS:
        return judged.metric(_OURS[name])
    if name == "gm_map":
        return tm.geometric(judged.metric("map"))
    if name in ("bpref", "gm_bpref"):
        values = tm.bpref(judged)
        return values if name == "bpref" else tm.geometric(values)
    if name == "utility":
        return tm.utility(judged, params, in_run)
    if name == "11pt_avg":
        return tm.eleven_point_average(judged, params)[0]
    if name == "num_nonrel_judged_ret":
        return tm.num_nonrel_judged_ret(judged)
    if name == "infAP":
        return tm.inferred_ap(judged)
    if name == "binG":
        return tm.binary_g(judged)
    return tm.set_measures(judged, name, params[0] if params else 1.0)
