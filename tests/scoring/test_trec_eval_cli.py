"""``ragretrieval score --trec-eval``: trec_eval's flags, its refusals and its output conventions on files small
enough to check by hand (the golden files are in test_trec_golden.py, the values against a plain re-reading of
trec_eval's loops in tests/oracles/test_trec_eval_oracle.py)."""

from __future__ import annotations

import gzip

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.scoring import trec_eval as te

QRELS = b"9 0 a 1\n9 0 b 0\n10 0 c 2\n10 0 d 1\n10 0 e -1\n11 0 f 1\n"
# 9: a at rank 2 (x first); 10: d, c (then unjudged e) ; 11 is not in the run; 12 is not in the qrels
RUN = b"9 Q0 x 1 3 first\n9 Q0 a 2 2 first\n10 Q0 d 1 5 first\n10 Q0 c 2 4 first\n10 Q0 e 3 1 first\n" \
      b"12 Q0 z 1 1 last\n"


@pytest.fixture
def files(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_bytes(QRELS)
    run.write_bytes(RUN)
    return qrels, run


def trec_eval(*args, code: int = 0):
    result = CliRunner().invoke(main, ["score", "--trec-eval", *map(str, args)])
    assert result.exit_code == code, result.output
    return result


def lines(result) -> list[tuple[str, str, str]]:
    return [tuple(part.strip() for part in line.split("\t")) for line in result.stdout.splitlines()]


def test_three_columns_names_padded_to_22_and_queries_in_byte_order(files):
    result = trec_eval("-q", "-m", "map", "-m", "num_ret", *files)
    assert result.stdout.splitlines()[:2] == ["num_ret               \t10\t3", "map                   \t10\t1.0000"]
    # "10" sorts before "9" as trec_eval's strcmp sorts; measures in trec_eval's order, not the order of -m
    assert lines(result) == [("num_ret", "10", "3"), ("map", "10", "1.0000"), ("num_ret", "9", "2"),
                             ("map", "9", "0.5000"), ("num_ret", "all", "5"), ("map", "all", "0.7500")]


def test_c_averages_over_every_qrels_query_and_n_leaves_out_the_summary(files):
    result = trec_eval("-q", "-c", "-n", "-m", "num_q", "-m", "num_rel", "-m", "P.1", *files)
    assert lines(result) == [("num_rel", "10", "2"), ("P_1", "10", "1.0000"), ("num_rel", "11", "1"),
                             ("P_1", "11", "0.0000"), ("num_rel", "9", "1"), ("P_1", "9", "0.0000")]
    summary = lines(trec_eval("-c", "-m", "runid", "-m", "num_q", "-m", "P.1", *files))
    assert summary == [("runid", "all", "last"), ("num_q", "all", "3"), ("P_1", "all", "0.3333")]
    assert lines(trec_eval("-m", "num_q", "-m", "P.1", *files)) == [("num_q", "all", "2"), ("P_1", "all", "0.5000")]


def test_l_sets_the_relevance_level_and_m_the_depth(files):
    assert lines(trec_eval("-l", "2", "-m", "num_rel", "-m", "map", *files)) == [("num_rel", "all", "1"),
                                                                                ("map", "all", "0.2500")]
    # -l0: every judged doc is relevant (b, labelled 0, too)
    assert lines(trec_eval("-l0", "-m", "num_rel", *files)) == [("num_rel", "all", "4")]
    assert lines(trec_eval("-M1", "-m", "num_ret", "-m", "P.2", *files)) == [("num_ret", "all", "2"),
                                                                           ("P_2", "all", "0.2500")]


ALL_ZERO_QRELS = b"q1 0 d1 0\nq1 0 d2 0\nq1 0 d3 0\nq2 0 e1 1\n"
ALL_ZERO_RUN = b"q1 Q0 x1 1 3.0 r\nq1 Q0 d1 2 2.0 r\nq1 Q0 x2 3 1.0 r\nq2 Q0 e1 1 1.0 r\n"


def test_at_l0_a_query_whose_labels_are_all_0_has_no_rndcg(tmp_path):
    """-l0 makes q1's three 0-labelled docs relevant, but none has a gain: trec_eval's Rndcg reads no nDCG for it and
    prints 0/0 as glibc prints it, "-nan", for the query and for the mean over all queries."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_bytes(ALL_ZERO_QRELS)
    run.write_bytes(ALL_ZERO_RUN)
    result = trec_eval("-q", "-l0", "-m", "Rndcg", qrels, run)
    assert result.stdout == "Rndcg                 \tq1\t  -nan\nRndcg                 \tq2\t1.0000\n" \
                            "Rndcg                 \tall\t  -nan\n"
    # at -l1 q1 has nothing relevant: 0, as before
    assert lines(trec_eval("-q", "-m", "Rndcg", qrels, run)) == [("Rndcg", "q1", "0.0000"), ("Rndcg", "q2", "1.0000"),
                                                                 ("Rndcg", "all", "0.5000")]
    # q1 alone: no retrieved doc has a gain anywhere in the run (this ended in an IndexError)
    qrels.write_bytes(b"".join(ALL_ZERO_QRELS.splitlines(keepends=True)[:3]))
    run.write_bytes(b"".join(ALL_ZERO_RUN.splitlines(keepends=True)[:3]))
    assert lines(trec_eval("-q", "-l0", "-m", "G", "-m", "ndcg", "-m", "ndcg_rel", "-m", "Rndcg", "-m", "dcg", qrels,
                           run)) == [("G", "q1", "0.0000"), ("dcg", "q1", "0.0000"), ("ndcg", "q1", "0.0000"),
                                     ("ndcg_rel", "q1", "0.0000"), ("Rndcg", "q1", "-nan"), ("G", "all", "0.0000"),
                                     ("dcg", "all", "0.0000"), ("ndcg", "all", "0.0000"),
                                     ("ndcg_rel", "all", "0.0000"), ("Rndcg", "all", "-nan")]


def test_the_first_parameters_given_for_a_measure_win_and_cutoffs_are_read_as_atol_reads(files):
    result = trec_eval("-m", "P.10,2.9", "-m", "P.3", "-m", "success", *files)
    assert [name for name, _, _ in lines(result)] == ["P_2", "P_10", "success_1", "success_5", "success_10"]
    assert [name for name, _, _ in lines(trec_eval("-m", "iprec_at_recall.1,.5", *files))] == [
        "iprec_at_recall_0.50", "iprec_at_recall_1.00"]
    assert [name for name, _, _ in lines(trec_eval("-m", "set_F.0.5", "-m", "utility.1,-1,0,0", *files))] == [
        "utility_1,-1,0,0", "set_F_0.5"]


def test_set_nickname(files):
    assert [name for name, _, _ in lines(trec_eval("-m", "set", *files))] == [
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_relative_P", "set_recall",
        "set_map", "set_F"]


def test_gzipped_files_are_read_as_they_are(files, tmp_path):
    qrels, run = files
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(run.read_bytes()))
    assert trec_eval("-q", qrels, packed).stdout == trec_eval("-q", qrels, run).stdout


def test_a_doc_listed_twice_is_refused_unless_below_m(files, tmp_path):
    qrels, _ = files
    twice = tmp_path / "twice.txt"
    twice.write_bytes(b"9 Q0 a 1 3 t\n9 Q0 x 2 2 t\n9 Q0 a 3 1 t\n")
    result = trec_eval(qrels, twice, code=1)
    assert result.stderr == "Error: query '9' retrieves document 'a' more than once\n"
    assert lines(trec_eval("-M2", "-m", "map", qrels, twice)) == [("map", "all", "1.0000")]


def test_a_run_of_one_line(files, tmp_path):
    qrels, _ = files
    one = tmp_path / "one.txt"
    one.write_bytes(b"9 Q0 a 1 1 only")
    assert lines(trec_eval("-m", "runid", "-m", "recip_rank", qrels, one)) == [("runid", "all", "only"),
                                                                               ("recip_rank", "all", "1.0000")]


@pytest.mark.parametrize("data, message", [
    (b"", "no results in the run file"),
    (b"\n  \n", "no results in the run file"),
    (b"12 Q0 z 1 1 t\n", "no queries with both results"),
])
def test_a_run_with_nothing_to_evaluate_is_refused(files, tmp_path, data, message):
    qrels, _ = files
    run = tmp_path / "nothing.txt"
    run.write_bytes(data)
    result = trec_eval(qrels, run, code=1)
    assert message in result.stderr and result.stdout == "" and result.stderr.count("\n") == 1


def test_with_c_a_run_of_unknown_queries_scores_every_qrels_query_zero(files, tmp_path):
    qrels, _ = files
    run = tmp_path / "elsewhere.txt"
    run.write_bytes(b"12 Q0 z 1 1 t\n")
    assert lines(trec_eval("-c", "-m", "num_q", "-m", "map", qrels, run)) == [("num_q", "all", "3"),
                                                                            ("map", "all", "0.0000")]


# --------------------------------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("args, message", [
    (["-M", "0"], "Error: max_docs (-M) must be a positive integer, got 0"),
    (["-M", "-1"], "Error: max_docs (-M) must be a positive integer, got -1"),
    (["-l", "-1"], "Error: level (-l) must be an integer >= 0, got -1"),
    (["-m", "nope"], "Error: not trec_eval measures: 'nope'; ragretrieval computes: runid, num_q"),
    (["-m", "map", "-m", "nope.3", "-m", "prefs_simp"],
     "Error: trec_eval measures not computed by ragretrieval: prefs_simp; not trec_eval measures: 'nope.3'; the "
     "others asked for: -m map"),
    (["-m", "qrels_jg"], "Error: trec_eval measures not computed by ragretrieval: map_avgjg, P_avgjg, "
                         "Rprec_mult_avgjg; the others asked for: -m runid -m num_q"),
    (["-m", "ndcg.1=3,2=9"], "Error: trec_eval measures not computed by ragretrieval: ndcg.1=3,2=9 (gain values)"),
    (["-m", "G.1=2"], "Error: trec_eval measures not computed by ragretrieval: G.1=2 (gain values)"),
    # the others keep their parameters, ready to paste; the refused ndcg is not offered back without its gains
    (["-m", "P.3", "-m", "recall.2", "-m", "ndcg.1=3"], "Error: trec_eval measures not computed by ragretrieval: "
                                                        "ndcg.1=3 (gain values); the others asked for: -m P.3 -m "
                                                        "recall.2\n"),
    (["-m", "rbp.1=3"], "Error: measure rbp.1=3: only the persistence is taken, as p=VALUE"),
    (["-m", "rbp.p=0.5,1=2"], "Error: measure rbp.p=0.5,1=2: only the persistence is taken"),
    (["-m", "P."], "Error: measure 'P.': no parameters after the '.'"),
    (["-m", "P.0,5"], "Error: measure P.0,5: cutoffs must be positive integers"),
    (["-m", "P.-5"], "Error: measure P.-5: cutoffs must be positive integers"),
    (["-m", "P.ten"], "Error: measure P.ten: cutoffs must be positive integers"),
    # C's atol would clamp it and print P_9223372036854775807, a measure not asked for
    (["-m", "P.99999999999999999999"], "Error: measure P.99999999999999999999: cutoff 99999999999999999999 is past "
                                      "the largest trec_eval takes (9223372036854775807)"),
    (["-m", "recall.5,9223372036854775808"], "Error: measure recall.5,9223372036854775808: cutoff "
                                             "9223372036854775808 is past the largest trec_eval takes"),
    (["-m", "P.5,5.5"], "Error: measure P.5,5.5: a cutoff is given twice"),
    (["-m", "iprec_at_recall..5,0.5"], "Error: measure iprec_at_recall..5,0.5: a cutoff is given twice"),
    (["-m", "utility.1,2"], "Error: measure utility.1,2: takes exactly 4 coefficients, got 2"),
    (["-m", "11pt_avg..5,.25"], "Error: measure 11pt_avg..5,.25: give the recall fractions in increasing order"),
])
def test_refusals_are_one_line(files, args, message):
    result = trec_eval(*args, *files, code=2)
    assert result.stdout == "" and result.stderr.startswith(message) and result.stderr.count("\n") == 1


def test_huge_values(files):
    assert lines(trec_eval("-l", str(10**30), "-m", "num_rel", "-m", "map", *files)) == [("num_rel", "all", "0"),
                                                                                       ("map", "all", "0.0000")]
    assert lines(trec_eval("-M", str(2**62), "-m", "num_ret", *files)) == [("num_ret", "all", "5")]
    assert lines(trec_eval("-m", f"P.{2**63 - 1}", *files)) == [(f"P_{2**63 - 1}", "all", "0.0000")]
    assert "is past the largest trec_eval takes" in trec_eval("-m", f"P.{10**30}", *files, code=2).stderr


@pytest.mark.parametrize("args", [["-q"], ["-c"], ["-n"], ["-M", "5"], ["-l", "2"]])
def test_trec_eval_flags_need_trec_eval(files, args):
    result = CliRunner().invoke(main, ["score", *args, *map(str, files)])
    assert result.exit_code == 2 and f"{args[0]} can only be used with --trec-eval" in result.stderr


@pytest.mark.parametrize("args", [["--json"], ["--depth", "3"], ["--rel-level", "2"], ["--queries", "both"],
                                  ["--ties", "rank"], ["--per-query", "out.tsv"]])
def test_our_flags_are_refused_with_trec_eval(files, args):
    result = CliRunner().invoke(main, ["score", "--trec-eval", *args, *map(str, files)])
    assert result.exit_code == 2 and f"{args[0]} cannot be used with --trec-eval" in result.stderr


def test_every_measure_known_is_named_once_in_trec_evals_order():
    assert len(set(te.ALL_MEASURES)) == len(te.ALL_MEASURES) == 57
    assert set(te.KINDS) <= set(te.ALL_MEASURES)
    assert set(te.NICKNAMES["all_trec"]) | {"dcg", "ideal_dcg"} == set(te.KINDS)  # all of all_trec, and those two
    for members in te.NICKNAMES.values():
        assert set(members) <= set(te.ALL_MEASURES)
    assert [m.name for m in te.parse_measures([])] == list(te.NICKNAMES["official"])
