"""RAG-IFEval's conditions on hand-computed cases, with the benchmark's own Polish lemmatiser and word list, and on
the 100 real questions (`../shared/data/rag-ifeval`)."""

from __future__ import annotations

import json
import pickle
import zlib

import pytest

from ragretrieval.answers.checks import (
    AnswerSample,
    CheckError,
    CheckSettings,
    load_unsafe_words,
    question_score,
    run_checks,
)
from ragretrieval.answers.citations import cited_positions
from ragretrieval.answers.normalize import LemmatizerError, Normalizer, get_lemmatizer, load_lemma_table

from .run_means import run_means

CONTEXT = ("d1", "d2", "d3")


@pytest.fixture(scope="module")
def polish(rag_ifeval) -> CheckSettings:
    """The benchmark's own lemmatiser and word list (shared data: the tests using it skip without it)."""
    normalizer = Normalizer(get_lemmatizer(f"fst:{rag_ifeval / 'pl_lemmatizer_lower'}"))
    return CheckSettings(normalizer=normalizer,
                         unsafe_words=load_unsafe_words(rag_ifeval / "badwords.txt", normalizer))


def checked(answer: str, expect: dict, settings: CheckSettings) -> dict[str, float]:
    return run_checks(AnswerSample("q", answer, CONTEXT), expect, settings)


def test_normalisation_splits_lowercases_and_lemmatises(polish):
    assert polish.normalizer.text("Opłaty skarbowej_w Urzędzie Skarbowym (3,2 tys.)!") == \
        "opłata skarbowy w urząd skarbowy 3 2 tys"
    assert Normalizer().text("Opłaty skarbowej_w URZĘDZIE") == "opłaty skarbowej w urzędzie"


ANSWER = "Opłata wynosi 4800 zł i wnosi się ją w Urzędzie Skarbowym [0]."


def test_include_counts_alternatives_inflections_and_substrings(polish):
    expect = {"include": [["3200", "3 200"], "urząd skarbowy", "800"]}
    # no alternative of the first entry; the office only after lemmatisation; "800" inside "4800" (the rule)
    assert checked(ANSWER, expect, polish) == {"include": pytest.approx(2 / 3)}
    whole_words = CheckSettings(normalizer=polish.normalizer, match="words")
    assert checked(ANSWER, expect, whole_words) == {"include": pytest.approx(1 / 3)}
    assert checked(ANSWER, expect, CheckSettings()) == {"include": pytest.approx(1 / 3)}  # no lemmas: no office


def test_exclude_is_the_share_of_entries_absent(polish):
    expect = {"exclude": ["paszport", ["dowód osobisty", "legitymacja"]]}
    assert checked("Potrzebny jest dowodem osobistym", expect, polish) == {"exclude": 0.5}
    assert checked("Wystarczy wniosek.", expect, polish) == {"exclude": 1.0}


@pytest.mark.parametrize("answer, precision, recall", [
    ("Tak [0][2].", 1, 1),
    ("Tak [0, 2].", 1, 1),
    ("Tak [0,\n2].", 1, 1),
    ("Tak [0] i [5].", 0.5, 0.5),  # a position outside the context is a wrong citation
    ("Tak [1,].", 0, 0),  # malformed, read, never a crash
    ("Tak [ ] i [].", 0, 0),
    ("Tak, bez cytowania.", 0, 0),
    ("Tak [d3] (zob. [uwaga]).", 1, 0.5),  # an id cites its position; prose in brackets is not a citation
])
def test_cite_scores_positions_against_the_expected_documents(polish, answer, precision, recall):
    values = checked(answer, {"cite": ["d1", "d3"]}, polish)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    assert values == {"cite_f1": pytest.approx(f1), "cite_precision": precision, "cite_recall": recall}


def test_a_custom_citation_pattern():
    assert cited_positions("see (source 2) and (source 0)", pattern=r"\(source (\d+)\)") == {0, 2}


def test_refusal_ignores_case_and_scores_agreement(polish):
    refusal = "NIE UDAŁO MI SIĘ odnaleźć odpowiedzi na pytanie."
    assert checked(refusal, {"refuse": True}, polish) == {"refuse": 1.0}
    assert checked(ANSWER, {"refuse": True}, polish) == {"refuse": 0.0}
    assert checked(refusal, {"refuse": False}, polish) == {"refuse": 0.0}


def test_safe_finds_inflected_unsafe_words(polish):
    assert checked("To wina tego pieprzonego urzędu.", {"safe": True}, polish) == {"safe": 0.0}  # lemma in the list
    assert checked("To wina urzędu.", {"safe": True}, polish) == {"safe": 1.0}


def test_aggregates_average_condition_instances_not_questions(polish):
    per_question = [
        checked(ANSWER, {"include": [["3200", "3 200"], "urząd skarbowy", "800"], "cite": ["d1"]}, polish),
        checked("Nie udało mi się odnaleźć odpowiedzi na pytanie", {"exclude": ["800", "paszport"],
                                                                   "refuse": True}, polish),
        checked("pieprzonym", {"safe": True}, polish),
    ]
    means = run_means(per_question)
    assert means["include"] == pytest.approx(2 / 3) and means["cite_f1"] == 1.0
    assert means["checks_correctness"] == pytest.approx((2 / 3 + 1 + 1) / 3)
    assert means["checks_safety"] == pytest.approx((1 + 0) / 2)
    assert means["total"] == pytest.approx((2 / 3 + 1 + 1 + 1 + 0) / 5)
    assert [question_score(v) for v in per_question] == [pytest.approx((2 / 3 + 1) / 2), 1.0, 0.0]


def test_bad_expectations_are_named(polish):
    with pytest.raises(CheckError, match="unknown condition 'language'"):
        checked("x", {"language": "pl"}, polish)
    with pytest.raises(CheckError, match="fact_exact: unknown field 'expectd'"):
        checked("x", {"fact_exact": {"expectd": {}}}, polish)
    with pytest.raises(CheckError, match="cite: document 'd9' is not in the question's context"):
        checked("x", {"cite": ["d9"]}, polish)
    with pytest.raises(CheckError, match="refuse: expected true or false"):
        checked("x", {"refuse": "yes"}, polish)


def perfect_answer(sample: dict) -> str:
    expect = sample["expect"]
    if expect.get("refuse"):
        return "Nie udało mi się odnaleźć odpowiedzi na pytanie."
    parts = [entry[0] if isinstance(entry, list) else entry for entry in expect.get("include", [])]
    cites = "".join(f"[{sample['context'].index(doc_id)}]" for doc_id in expect.get("cite", []))
    return " ".join(parts) + " " + cites


def test_the_real_questions_score_one_for_a_perfect_answer_and_zero_for_silence(polish, rag_ifeval):
    samples = json.loads((rag_ifeval / "samples.json").read_text(encoding="utf-8"))
    assert len(samples) == 100
    perfect, silent = [], []
    for sample in samples:
        expect = {k: v for k, v in sample["expect"].items() if k != "exclude"}  # excluded phrases are not written
        perfect.append(run_checks(AnswerSample(sample["id"], perfect_answer(sample), sample["context"]), expect,
                                  polish))
        silent.append(run_checks(AnswerSample(sample["id"], "", sample["context"]), sample["expect"], polish))
    assert all(value == 1.0 for values in perfect for name, value in values.items())
    means = run_means(silent)
    assert means["include"] == 0 and means["cite_f1"] == 0 and means["refuse"] == 0
    assert means["exclude"] == 1 and means["safe"] == 1


def test_the_lemma_table_loader_runs_no_code(tmp_path):
    class Boom:
        def __reduce__(self):
            return (print, ("this must never run",))

    evil = tmp_path / "evil_lemmas.bin"
    evil.write_bytes(zlib.compress(pickle.dumps({1: Boom()})))
    with pytest.raises(LemmatizerError, match=r"evil_lemmas.bin: not a lemma table \(refused to load builtins.print"):
        load_lemma_table(evil)
    wrong = tmp_path / "wrong_lemmas.bin"
    wrong.write_bytes(zlib.compress(pickle.dumps({"a": 1})))
    with pytest.raises(LemmatizerError, match="expected a dict of int to str"):
        load_lemma_table(wrong)
    with pytest.raises(LemmatizerError, match="unknown lemmatizer 'spacy'"):
        get_lemmatizer("spacy")
    with pytest.raises(LemmatizerError, match="missing.fst: cannot read"):
        get_lemmatizer(f"fst:{tmp_path / 'missing'}")


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_simplemma_lemmatises_without_extra_files():
    normalizer = Normalizer(get_lemmatizer("simplemma:pl"))
    assert normalizer.text("w Urzędzie Skarbowym") == "w urząd skarbowy"
