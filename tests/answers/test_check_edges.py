"""The edges of the answer checks that hand-computed cases leave open: empty sides, thresholds met exactly, defaults
of a question's scoring fields, evidence without critical items, ordered ellipsis quotes, error messages, and a
benchmark-style lemmatiser built here from our own words (an FST and its lemma table, compressed or not)."""

from __future__ import annotations

import pickle
import re
import zlib

import ducer
import pytest

from ragretrieval.answers.checks import AnswerSample, CheckError, CheckSettings, question_score, run_checks
from ragretrieval.answers.checks.legal import (
    LegalQuestion,
    LegalSample,
    answer_values_text,
    contains,
    score_legal,
)
from ragretrieval.answers.checks.rules import load_unsafe_words
from ragretrieval.answers.citations import precision_recall_f1
from ragretrieval.answers.normalize import LemmatizerError, Normalizer, get_lemmatizer, load_lemma_table
from ragretrieval.answers.values import has_number, numbers_in

from .run_means import run_means

CONTEXTS = ("合同约定租金每月5000元。", "押金10000元，承诺退还。", "无关内容。")
CRITICAL = {"must_include": "押金10000元", "is_critical": True}
SIDE = {"must_include": "租金每月5000元", "is_critical": False}


def sample(answer: str, cited=()) -> LegalSample:
    return LegalSample(question="押金多少？", answer=answer, contexts=CONTEXTS, cited=frozenset(cited))


def test_citation_markers_inside_a_name_or_past_the_contexts():
    assert answer_values_text("陈明[0]飞") == "陈明 飞"
    question = LegalQuestion(type="fact_exact", expected={"entity": "陈明飞"})
    assert score_legal(question, sample("收款人是陈明[0]飞。"))["exact_match"] == 1.0
    assert sample("见 [3]", cited=[0, 3]).cited_texts() == [CONTEXTS[0]]  # position 3 is past the three contexts


def test_ellipsis_quotes_match_their_parts_in_order_only():
    assert contains("甲乙甲", "甲…乙") and contains("先签合同，后付押金", "签合同...押金")
    assert not contains("乙甲", "甲...乙") and not contains("押金后签合同", "签合同...押金")
    assert not contains("任何文字", "...")  # a phrase with nothing but an ellipsis matches nothing


def test_fact_exact_defaults_and_empty_expectations():
    no_key = LegalQuestion(type="fact_exact", expected={"amount_total": 10000}, required_evidence=[CRITICAL])
    assert score_legal(no_key, sample("押金一万元"))["citation_correctness"] == 1.0  # citation_required: false
    empty = LegalQuestion(type="fact_exact", expected={}, scoring={"citation_required": False})
    assert score_legal(empty, sample("随便"))["exact_match"] == 0.0
    ranged = LegalQuestion(type="fact_exact", expected={"date_range": {"start": "2020-08-01", "end": "2020-08-30"}})
    assert score_legal(ranged, sample("从2020年8月1日起"))["exact_match"] == 0.0  # one end is not the range


def test_fact_exact_citation_needs_a_critical_string_unless_none_is_critical():
    required = {"citation_required": True}
    question = LegalQuestion(type="fact_exact", expected={"count": 1}, required_evidence=[CRITICAL, SIDE],
                             scoring=required)
    assert score_legal(question, sample("1次 [0]", cited=[0]))["citation_correctness"] == 0.0  # side string only
    assert score_legal(question, sample("1次 [1]", cited=[1]))["citation_correctness"] == 1.0
    only_side = LegalQuestion(type="fact_exact", expected={"count": 1}, required_evidence=[SIDE], scoring=required)
    assert score_legal(only_side, sample("1次 [0]", cited=[0]))["citation_correctness"] == 1.0


def test_evidence_items_without_a_string_are_ignored():
    question = LegalQuestion(type="evidence_set", required_evidence=[{"page": 1}, {"must_include": 5},
                                                                   {"must_include": ""}, CRITICAL])
    assert question.must_include() == ["押金10000元"]
    nothing = LegalQuestion(type="evidence_set", required_evidence=[{"page": 1}])
    assert score_legal(nothing, sample("见 [1]", cited=[1]))["evidence_recall"] == 0.0


def test_evidence_set_precision_counts_every_evidence_string_and_default_thresholds():
    question = LegalQuestion(type="evidence_set", required_evidence=[CRITICAL, SIDE])  # no thresholds: 0.8 and 0.7
    values = score_legal(question, sample("见 [0][1]", cited=[0, 1]))
    assert (values["evidence_recall"], values["evidence_precision"]) == (1.0, 1.0)  # [0] holds the side string
    assert values["evidence_set"] == pytest.approx(1.0)
    values = score_legal(question, sample("见 [1][2]", cited=[1, 2]))  # precision 0.5 < 0.7
    assert values["evidence_set"] == pytest.approx(0.5 + 0.2)


def test_a_score_exactly_at_the_pass_mark_passes():
    summary = run_means([{"fact_exact": 0.7, "pass_rate": 1.0}, {"fact_exact": 0.69, "pass_rate": 0.0}])
    assert summary["pass_rate_fact_exact"] == 0.5 and summary["pass_rate"] == 0.5


def test_legal_errors_are_named():
    with pytest.raises(CheckError, match=re.escape("unknown legal question type 'quiz' (known: fact_exact, "
                                                   "evidence_set, conflict_gap)")):
        score_legal(LegalQuestion(type="quiz"), sample("x"))
    with pytest.raises(CheckError, match=re.escape("fact_exact: unknown expected field 'colour'")):
        score_legal(LegalQuestion(type="fact_exact", expected={"colour": "red"}), sample("x"))


LIST = "expected a non-empty list of phrases (a list inside it: alternatives)"


@pytest.mark.parametrize("condition, value, message", [
    ("include", "not a list", f'include: {LIST}, got "not a list"'),
    ("include", [], f"include: {LIST}, got []"),
    ("include", None, f"include: {LIST}, got null"),
    ("exclude", "abc", f'exclude: {LIST}, got "abc"'),
    ("include", ["ok", 5], "include[1]: must be text, got 5"),
    ("include", [["a", None]], "include[0][1]: must be text, got null"),
    ("include", [[]], "include[0]: an empty list of alternatives can never be found"),
    ("exclude", ["  ", "x"], 'exclude[0]: has no letter or digit to look for, got "  " (it would be found in every '
                            "answer)"),
    ("include", ["!!!"], 'include[0]: has no letter or digit to look for, got "!!!" (it would be found in every '
                         "answer)"),
    ("safe", "yes", 'safe: expected true or false, got "yes"'),
    ("refuse", 1, "refuse: expected true or false, got 1"),
    ("cite", "d1", 'cite: expected a list of document ids, got "d1"'),
    ("cite", [1], "cite: expected a list of document ids, got [1]"),
    ("cite", [""], 'cite: expected a list of document ids, got [""]'),
    ("cite", [], "cite: an empty list (F1 against no document is always 0); leave cite out instead"),
])
def test_rule_errors_name_the_condition(condition, value, message):
    with pytest.raises(CheckError, match="^" + re.escape(message) + "$"):
        run_checks(AnswerSample("q", "answer", ("d1",)), {condition: value}, CheckSettings())


def test_empty_sides_score_zero():
    assert precision_recall_f1(set(), {1}) == {"f1": 0.0, "precision": 0.0, "recall": 0.0}
    assert precision_recall_f1({1}, set()) == {"f1": 0.0, "precision": 0.0, "recall": 0.0}
    assert question_score({}) is None and question_score({"include": 0.5, "other": 1.0}) == 0.5


def test_unsafe_words_are_lower_cased_before_their_lemma(tmp_path):
    words = tmp_path / "unsafe.txt"
    words.write_text("Straße\n\n  Mist  \n", encoding="utf-8")
    settings = CheckSettings(unsafe_words=load_unsafe_words(words, Normalizer()))
    assert settings.unsafe_words == frozenset({"straße", "mist"})  # not "strasse": lower, not upper then lower
    assert run_checks(AnswerSample("q", "Die Straße!"), {"safe": True}, settings) == {"safe": 0.0}


def test_decimals_keep_six_places():
    assert numbers_in("4.25元") == {4.25}
    assert has_number("0.1234567", 0.1234567) and has_number("0.1234567", 0.123457)
    assert not has_number("0.1234567", 0.123456)


@pytest.fixture
def word_forms(tmp_path):
    """A lemmatiser of our own in the benchmark's format: forms -> ids in an FST, ids -> lemmas in a table."""
    forms = sorted([(b"biegali", 1), (b"biegam", 1), (b"domy", 2), (b"nowhere", 9)])
    ducer.Map.build(tmp_path / "mini.fst", forms)
    return tmp_path / "mini"


@pytest.mark.parametrize("compressed", [True, False])
def test_a_benchmark_lemmatiser_of_our_own(word_forms, compressed):
    table = pickle.dumps({1: "biegać", 2: "dom"})
    (word_forms.parent / "mini_lemmas.bin").write_bytes(zlib.compress(table) if compressed else table)
    get_lemmatizer.cache_clear()
    lemmatizer = get_lemmatizer(f"fst:{word_forms}")
    assert re.fullmatch(r"fst:mini\.fst@[0-9a-f]{12}", lemmatizer.identity)
    normalizer = Normalizer(lemmatizer)
    # known forms become lemmas; an id the table lacks and an unknown word stay as written (lower-cased)
    assert normalizer.text("Biegali po Domy, NOWHERE i dalej") == "biegać po dom nowhere i dalej"
    assert load_lemma_table(word_forms.parent / "mini_lemmas.bin") == {1: "biegać", 2: "dom"}


def test_bad_lemmatiser_files_are_named(tmp_path, word_forms):
    get_lemmatizer.cache_clear()
    with pytest.raises(LemmatizerError, match=re.escape(f"{tmp_path / 'absent.fst'}: cannot read (No such file or "
                                                        "directory)")):
        get_lemmatizer(f"fst:{tmp_path / 'absent'}")
    (tmp_path / "junk.fst").write_bytes(b"not an fst at all")
    with pytest.raises(LemmatizerError, match=re.escape(f"{tmp_path / 'junk.fst'}: not an FST map (")):
        get_lemmatizer(f"fst:{tmp_path / 'junk'}")
    with pytest.raises(LemmatizerError, match=re.escape(f"{tmp_path / 'mini_lemmas.bin'}: not a lemma table (")):
        get_lemmatizer(f"fst:{word_forms}")  # the FST is there, its table is not
    (tmp_path / "list_lemmas.bin").write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(LemmatizerError, match="expected a dict of int to str"):
        load_lemma_table(tmp_path / "list_lemmas.bin")
    (tmp_path / "half_lemmas.bin").write_bytes(pickle.dumps({1: 2}))
    with pytest.raises(LemmatizerError, match="expected a dict of int to str"):
        load_lemma_table(tmp_path / "half_lemmas.bin")
    with pytest.raises(LemmatizerError, match="simplemma has no language 'xx'"):
        get_lemmatizer("simplemma:xx")
    with pytest.raises(LemmatizerError, match="unknown lemmatizer 'none:pl'"):
        get_lemmatizer("none:pl")


def test_a_date_is_not_pieced_together_from_two_texts():
    gap = LegalQuestion(type="conflict_gap", should_abstain=False)
    split = LegalSample(question="他是2020年", answer="在2020年8月1日。", contexts=("8月1日付的款。",))
    assert score_legal(gap, split)["no_invention"] == 0.0
    whole = LegalSample(question="什么时候？", answer="在2020年8月1日。", contexts=("2020年8月1日付的款。",))
    assert score_legal(gap, whole)["no_invention"] == 1.0


def test_citations_in_every_form_and_order():
    context = ("d1", "d2", "d3")
    from ragretrieval.answers.citations import cited_positions

    assert cited_positions("[d1] i [2]", context) == {0, 2}  # an id, then a number: both read
    assert cited_positions("[uwaga] [0]", context) == {0}  # prose before a citation does not end the reading
    assert cited_positions("(zob. [strona 5, 2])", context) == set()  # prose with numbers in it is not a citation
    assert cited_positions("[d3, 1]", context) == set()  # ids and numbers mixed: prose, in the default syntax
    assert cited_positions("see {d1, d3}", context, pattern=r"\{([^}]*)\}") == {0, 2}  # ids in a custom syntax
    settings = CheckSettings(citation_pattern=r"\(source (\d+)\)")
    values = run_checks(AnswerSample("q", "yes (source 2)", context), {"cite": ["d3"]}, settings)
    assert values["cite_f1"] == 1.0


def test_unknown_conditions_list_the_known_ones():
    with pytest.raises(CheckError, match=re.escape("unknown condition 'tone' (known: include, exclude, cite, refuse, "
                                                   "safe, fact_exact, evidence_set, conflict_gap)")):
        run_checks(AnswerSample("q", "x"), {"tone": "calm"}, CheckSettings())


def test_simplemma_lemmatises_lower_cased_words_and_says_so():
    get_lemmatizer.cache_clear()
    lemmatizer = get_lemmatizer("simplemma:de")
    assert lemmatizer.identity == "simplemma:de"
    assert Normalizer(lemmatizer).text("HÄUSER") == "haus"  # simplemma knows "häuser", not "HÄUSER"


def test_odd_runs_of_numerals_never_crash_and_idioms_are_not_numbers():
    assert numbers_in("十百千") == {1110}  # units one after another add up; no crash
    assert numbers_in("万一出了事") == set()  # 万一 ("in case"): a run that starts with 万 is not a number
    assert numbers_in("一万万") == {100_000_000}  # 万万 is 亿, as older texts write it
