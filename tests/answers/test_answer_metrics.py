"""One answer-metric table (scoring/answer_metrics.py) that the text table, the HTML report, the web pages and
compare's default metrics read."""

from __future__ import annotations

from ragretrieval.analysis import answer_html
from ragretrieval.answers import render, usage
from ragretrieval.answers.checks import CHECKS
from ragretrieval.answers.checks.rules import AGGREGATES
from ragretrieval.scoring.answer_metrics import ANSWER_METRICS, BY_NAME, ORDER, describe, summary_names
from ragretrieval.server.views import pill
from ragretrieval.work.plugins import JUDGES


def test_every_name_once_with_a_family_a_direction_and_a_description():
    names = [m.name for m in ANSWER_METRICS]
    assert len(names) == len(set(names))
    assert all(m.description and m.family in ("check", "aggregate", "legal", "judge", "usage") for m in ANSWER_METRICS)
    assert [m.name for m in ANSWER_METRICS if not m.higher_is_better] == list(usage.AGENT_METRICS)


def test_the_table_knows_every_built_in_check_aggregate_and_judge_metric():
    conditions = set(CHECKS) - {"cite"} | {"cite_f1", "cite_precision", "cite_recall", "pass_rate"}
    assert conditions | set(AGGREGATES) | {"checks_score"} <= set(BY_NAME)
    for entry in JUDGES.built_in:  # each judge's summary names the metrics it writes after '->'
        written = entry.summary.split("->")[1]
        if entry.name == "score5":
            assert "average_score" in BY_NAME
        elif entry.name != "nuggets":
            assert written.strip() in BY_NAME, entry.name
    assert {f"response/llm_judged/nuggets/{a}_{b}" for a in ("all", "vital") for b in ("strict", "partial")} <= \
        set(BY_NAME)


def test_every_view_reads_the_same_table():
    assert render.ORDER is ORDER and answer_html.SUMMARY == summary_names()
    assert render.ordered(["zzz_plugin", "cite_f1", "checks_score"]) == ["checks_score", "cite_f1", "zzz_plugin"]
    assert "cite_precision" in ORDER and "cite_precision" not in summary_names()  # a part: text table only
    assert pill("cite_f1", 0.5)["title"] == describe("cite_f1")
    assert describe("cite_f1") == ("cite_f1: F1 of the documents cited against those expected (check, higher is "
                                   "better)")
    assert describe("agent/total_token_count").endswith("(usage, lower is better)")
    assert describe("pass_rate_fact_exact").startswith("pass_rate_fact_exact: share of fact_exact questions")
    assert describe("short_answer") == "short_answer: from a plug-in judge or check"
