"""Golden tests: our numbers against trec_eval's own output files (and reference means from three libraries).

The files are trec_eval's own test files, in the repository (tests/data/trec_eval, with their NIST notice and a README
saying where they come from). trec_eval prints 4 decimals, so values must agree within 5e-5; every measure of ours
that trec_eval printed is compared, per query and for 'all'. The reference means of three libraries come from the
shared peer data when it is there (the test skips without it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.scoring import parse_metric, score
from ragretrieval.scoring.trec import read_qrels, read_run

TREC = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
TOLERANCE = 5e-5

# trec_eval measure (without its cutoff) -> our metric family
FAMILY = {"P": "precision", "recall": "recall", "success": "hit_rate", "ndcg_cut": "ndcg", "map_cut": "map"}
WHOLE = {"recip_rank": "mrr", "ndcg": "ndcg", "map": "map", "Rprec": "r_precision"}

# output file -> (qrels, run, options); default trec_eval averages over queries in both qrels and run
CASES = {
    "out.test": ("qrels.test", "results.test", {"queries": "both"}),
    "out.test.aq": ("qrels.test", "results.test", {"queries": "both"}),
    "out.test.aqc": ("qrels.test", "results.trunc", {"queries": "all"}),
    "out.test.aqcM": ("qrels.test", "results.trunc", {"queries": "all", "depth": 100}),
    "out.test.aql": ("qrels.rel_level", "results.test", {"queries": "both", "rel_level": 2}),
    # trec_eval read the cutoff "23.4" of ndcg_cut.10,20,23.4 as 23 (it prints ndcg_cut_23): it is ndcg@23 here
    "out.test.meas_params": ("qrels.test", "results.test", {"queries": "both"}),
}


def our_name(measure: str) -> str | None:
    """trec_eval's measure name -> ours, or None for measures we do not have."""
    if measure in WHOLE:
        return WHOLE[measure]
    match = re.fullmatch(r"(P|recall|success|ndcg_cut|map_cut)_(\d+)", measure)
    return f"{FAMILY[match[1]]}@{match[2]}" if match else None


def trec_output(name: str) -> dict[str, dict[str, float]]:
    """{our metric name: {query id or 'all': value}} for the measures we share with trec_eval."""
    values: dict[str, dict[str, float]] = {}
    for line in (TREC / name).read_text().splitlines():
        measure, query, value = line.split()
        metric = our_name(measure)
        if metric:
            values.setdefault(metric, {})[query] = float(value)
    return values


def trec_queries(name: str) -> set[str]:
    return {line.split()[1] for line in (TREC / name).read_text().splitlines()} - {"all"}


@pytest.fixture(scope="module")
def results():
    """Our scores for every case, computed once."""
    out = {}
    for name, (qrels_file, run_file, options) in CASES.items():
        expected = trec_output(name)
        metrics = [parse_metric(m) for m in expected]
        out[name] = (expected, score(read_qrels(TREC / qrels_file), read_run(TREC / run_file), metrics, **options))
    return out


@pytest.mark.parametrize("name", CASES)
def test_every_shared_measure_agrees_with_trec_eval(results, name):
    expected, result = results[name]
    assert len(expected) >= 9, "the file should hold several of our measures"
    per_query_seen = 0
    for metric, by_query in expected.items():
        assert result.means[metric] == pytest.approx(by_query["all"], abs=TOLERANCE), (name, metric, "all")
        for query, value in by_query.items():
            if query != "all":
                at = list(result.query_ids).index(query)
                assert result.per_query[metric][at] == pytest.approx(value, abs=TOLERANCE), (name, metric, query)
                per_query_seen += 1
    if name != "out.test":  # out.test is a summary only
        assert per_query_seen > 0


@pytest.mark.parametrize("name", [n for n in CASES if n != "out.test"])
def test_averaged_queries_are_trec_evals(results, name):
    _, result = results[name]
    assert set(result.query_ids) == trec_queries(name)


def test_minus_c_counts_the_query_missing_from_the_run(results):
    expected, result = results["out.test.aqc"]
    assert "302" in result.query_ids and result.per_query["map"][list(result.query_ids).index("302")] == 0.0
    assert len(result.query_ids) == 3
    assert expected["map"]["all"] == pytest.approx(0.1016, abs=1e-9)


def test_meas_params_cutoff_23_is_compared(results):
    expected, result = results["out.test.meas_params"]
    assert {"ndcg@23", "precision@7", "recall@2000", "hit_rate@2"} <= set(expected)
    assert result.means["ndcg@23"] == pytest.approx(expected["ndcg@23"]["all"], abs=TOLERANCE)


REFERENCE = ("trec6_default", "trec6_trunc_minus_c", "trec6_rel_level_l2")
QUERY_SET = {"intersection": "both", "qrels": "all"}


@pytest.mark.parametrize("name", REFERENCE)
def test_reference_means_of_ranx_pytrec_eval_and_ir_measures(peer_reference_metrics, name):
    reference = json.loads((peer_reference_metrics / f"{name}.json").read_text())
    config = reference["config"]
    assert (config["ties"], config["dups"], config["drop_norel"]) == ("trec", "best", False)
    assert config["qrels"].startswith("trec_eval_test/") and config["run"].startswith("trec_eval_test/")
    result = score(  # the same files as trec_eval_test/ in the peer data: ours in the repository
        read_qrels(TREC / Path(config["qrels"]).name),
        read_run(TREC / Path(config["run"]).name),
        list(reference["metrics"]),
        rel_level=config["rel_level"],
        queries=QUERY_SET[config["queries"]],
    )
    assert len(result.query_ids) == reference["counts"]["evaluated_queries"]
    for metric, by_library in reference["metrics"].items():
        for library in ("ranx", "pytrec_eval", "ir_measures"):
            if by_library.get(library) is not None:
                assert result.means[metric] == pytest.approx(by_library[library], abs=1e-9), (metric, library)


# ------------------------------------------------------------------------------ ragretrieval score --trec-eval
# output file -> the flags trec_eval was run with (its Makefile's quicktest), qrels, run
TREC_EVAL_CASES = {
    "out.test": ([], "qrels.test", "results.test"),
    "out.test.aq": (["-m", "all_trec", "-q"], "qrels.test", "results.test"),
    "out.test.aqc": (["-m", "all_trec", "-q", "-c"], "qrels.test", "results.trunc"),
    "out.test.aqcM": (["-m", "all_trec", "-q", "-c", "-M100"], "qrels.test", "results.trunc"),
    "out.test.aql": (["-m", "all_trec", "-mrelstring.20", "-q", "-l2"], "qrels.rel_level", "results.test"),
    "out.test.meas_params": (["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
                              "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
                              "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20"],
                             "qrels.test", "results.test"),
}
GAIN_VALUES = "-mndcg.1=3,2=9,4=4.5"  # ndcg with gain values: the one measure of these files we refuse


@pytest.mark.parametrize("name", TREC_EVAL_CASES)
def test_trec_eval_output_is_trec_evals_byte_for_byte(name):
    """`score --trec-eval` with trec_eval's own flags prints exactly what trec_eval printed: names, order, query
    order, number formats, counters, runid, relstring; the whole file, but for the ndcg-with-gains lines."""
    flags, qrels, run = TREC_EVAL_CASES[name]
    expected = (TREC / name).read_text()
    if GAIN_VALUES in flags:
        flags = [flag for flag in flags if flag != GAIN_VALUES]
        expected = "".join(line for line in expected.splitlines(keepends=True) if not line.startswith("ndcg_1=3"))
    result = CliRunner().invoke(main, ["score", "--trec-eval", *flags, str(TREC / qrels), str(TREC / run)])
    assert result.exit_code == 0, result.output
    assert result.stdout == expected and result.stderr == ""
    assert expected.count("\n") >= 30


def test_ndcg_with_gain_values_is_refused_in_one_line():
    flags, qrels, run = TREC_EVAL_CASES["out.test.meas_params"]
    result = CliRunner().invoke(main, ["score", "--trec-eval", *flags, str(TREC / qrels), str(TREC / run)])
    assert result.exit_code == 2 and result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith("Error: trec_eval measures not computed by ragretrieval: ndcg.1=3,2=9,4=4.5 "
                                    "(gain values); the others asked for: -m iprec_at_recall..10,.20,.25,.75,.50 "
                                    "-m P.5,7,3 -m recall.20,2000 -m Rprec_mult.5.0,0.2,0.35")
    # the list keeps each measure's parameters: pasted back, it prints trec_eval's file less the ndcg lines
    pasted = result.stderr.split("the others asked for: ")[1].split()
    again = CliRunner().invoke(main, ["score", "--trec-eval", "-q", *pasted, str(TREC / qrels), str(TREC / run)])
    expected = "".join(line for line in (TREC / "out.test.meas_params").read_text().splitlines(keepends=True)
                       if not line.startswith("ndcg_1=3"))
    assert again.exit_code == 0 and again.stdout == expected
