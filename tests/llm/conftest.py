"""Fixtures for the LLM tests: an isolated cache folder per test, a fake API key, and recipe-style responders."""

from __future__ import annotations

import json
import re

import pytest

from ragretrieval.testing.chat_server import TEST_API_KEY, ChatServer, Reply, document_in

API_KEY = TEST_API_KEY  # the key the suite's llm_env fixture (tests/conftest.py) sets


def evidence_lines(document: str) -> list[str]:
    """Lines worth quoting: list items and sentences, without their Markdown markers."""
    lines = []
    for line in document.splitlines():
        text = re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", "", line).strip()
        if len(text) >= 6 and not text.startswith(("#", "!", "|", "```", ">")):
            lines.append(text)
    return lines


def recipe_questions(document: str) -> list[dict]:
    """Two questions quoting the document verbatim, one of them with whitespace changed (found after folding)."""
    lines = evidence_lines(document) or [document.strip()[:20]]
    first, last = lines[0], lines[-1]
    return [
        {"question_type": "FACTUAL", "question_text": f"关于“{first[:12]}”这一步要注意什么？",
         "ground_truth": first, "evidence": [first]},
        {"question_type": "INFERENTIAL", "question_text": f"为什么最后要{last[:10]}，这和前面有什么关系？",
         "ground_truth": last, "evidence": [" ".join(last), first]},
    ]


def good_reply(request: dict) -> Reply:
    return Reply(json.dumps(recipe_questions(document_in(request)), ensure_ascii=False))


@pytest.fixture
def recipe_server():
    with ChatServer(good_reply) as server:
        yield server
