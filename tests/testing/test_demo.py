"""The demo dataset and the chat server the documentation's examples import work after a plain install: without
pytest (a test dependency only)."""

from __future__ import annotations

import subprocess
import sys

from ragretrieval.data.nuggets import read_nuggets
from ragretrieval.testing.demo import DOCUMENTS, QUESTIONS, demo_dataset, demo_nuggets
from ragretrieval.testing.generator_conformance import conformance_dataset

WITHOUT_PYTEST = """
import sys
sys.modules["pytest"] = None  # as after `pip install ragretrieval`: importing pytest fails
from ragretrieval.testing.chat_server import JUDGE_REPLY, ChatServer, Reply
from ragretrieval.testing.demo import demo_dataset
dataset = demo_dataset(sys.argv[1])
print(len(dataset.documents), len(dataset.questions))
"""


def test_the_examples_modules_import_without_pytest(tmp_path):
    result = subprocess.run([sys.executable, "-c", WITHOUT_PYTEST, str(tmp_path / "dataset")], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["3", "3"]


def test_the_suites_fixture_is_the_demo_dataset(tmp_path):
    demo, suite = demo_dataset(tmp_path / "demo"), conformance_dataset(tmp_path / "suite")
    assert [d.id for d in demo.documents] == [d.id for d in suite.documents] == [d.id for d in DOCUMENTS]
    assert [q.id for q in demo.questions] == [q.id for q in suite.questions] == [qid for qid, *_ in QUESTIONS]


def test_the_demo_nuggets_cover_every_question(tmp_path):
    by_question = {qid: entry.nuggets for qid, entry in read_nuggets(demo_nuggets(tmp_path / "n.jsonl")).items()}
    assert set(by_question) >= {qid for qid, *_ in QUESTIONS} and by_question["q-none"] == []
