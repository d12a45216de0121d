"""The nuggets judge in the web app: it reads nuggets.jsonl in the corpus's dataset folder, refuses to start
without it, and the detail page lists each nugget's verdict under the result's checks, escaped."""

from __future__ import annotations

import pytest

from ragretrieval.data.nuggets import Nugget, QuestionNuggets, write_nuggets
from ragretrieval.server.db import Database
from ragretrieval.server.jobs import claims
from ragretrieval.server.jobs.engine import EvaluationSettings, ItemResult
from ragretrieval.server.jobs.options import answer_settings
from ragretrieval.work.options import SettingsError

from .conftest import CORPUS, new_evaluation, new_set

EVIL = "<img src=x onerror=alert(1)>"


def settings(folder) -> EvaluationSettings:
    return EvaluationSettings(id="eval_1", name="e", dataset=CORPUS, dataset_path=str(folder) if folder else None,
                              question_set_id="qs_1", generator="openai:m", base_url="http://127.0.0.1:9/v1",
                              judge="nuggets")


def test_the_judge_reads_the_dataset_folders_nuggets(tmp_path):
    """The web evaluation's settings are `ragretrieval answer`'s: its session reads nuggets.jsonl in the dataset's
    folder on the worker's machine, and refuses to start without it."""
    web = answer_settings(settings(tmp_path), "OPENAI_API_KEY")
    with pytest.raises(SettingsError, match="the nuggets judge needs nuggets: .*nuggets.jsonl does not exist"):
        web.nuggets_file(tmp_path)
    write_nuggets(tmp_path / "nuggets.jsonl", [QuestionNuggets(question_id="q", nuggets=[])])
    assert web.nuggets_file(tmp_path) == tmp_path / "nuggets.jsonl"
    with pytest.raises(SettingsError, match="the dataset's folder is unknown"):
        web.nuggets_file(None)


def test_the_detail_page_lists_each_nugget_with_its_verdict(api, db_url):
    evaluation = new_evaluation(api, new_set(api, 1)["id"], "http://127.0.0.1:9/x", judge="nuggets")
    nuggets = [Nugget(text=EVIL, importance="vital"), Nugget(text="cold rice", importance="okay")]
    verdicts = ["support", "not_support"]
    db = Database(db_url)
    try:
        claim = claims.claim(db, "w", 60)
        claims.finish(db, claim, "w", ItemResult(rag_answer="an answer", checks={"nuggets": {
            "value": 0.5, "reasoning": "1 of 2", "nuggets": [
                {"text": n.text, "importance": n.importance, "verdict": v} for n, v in zip(nuggets, verdicts)]}}))
    finally:
        db.close()
    page = api.client.get(f"/evaluations/{evaluation['id']}").text
    assert '<ul class="checks nuggets" data-judge="nuggets"' in page
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;: support" in page
    assert '<li class="fail"><code>okay</code> cold rice: not_support</li>' in page
