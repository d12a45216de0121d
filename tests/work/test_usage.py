"""The one token and cost counter (work/usage.py) behind the LLM client and the embeddings API."""

from __future__ import annotations

import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest

from ragretrieval.embedders.openai_api import ApiUsage
from ragretrieval.llm.cache import Answer
from ragretrieval.llm.client import LLMSettings, Usage
from ragretrieval.work.usage import TokenCount


def test_many_threads_count_every_request_once():
    usage = TokenCount()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: usage.record(3, 2, 0.5) if i % 4 else usage.record_cached(), range(4000)))
    assert (usage.requests, usage.cached) == (3000, 1000)
    assert (usage.prompt_tokens, usage.completion_tokens, usage.tokens) == (9000, 6000, 15000)
    assert usage.cost == pytest.approx(1500.0)
    assert usage.status() == "tokens 15,000, $1500.0000" and TokenCount().status() == "tokens 0"


def test_a_copy_for_another_process_has_its_own_lock_and_the_same_counts():
    usage = ApiUsage()
    usage.add(1_000_000, price=0.02)
    usage.cut_inputs += 1
    copy = pickle.loads(pickle.dumps(usage))
    copy.add(10, price=0.0)
    assert copy.as_dict() == {"requests": 2, "tokens": 1_000_010, "cost": 0.02, "cut_inputs": 1}
    assert usage.as_dict()["requests"] == 1 and copy._lock is not usage._lock


def test_the_llm_client_counts_cached_answers_as_free():
    usage, settings = Usage(), LLMSettings(price_in=1.0, price_out=2.0)
    usage.add(Answer("a", prompt_tokens=1_000_000, completion_tokens=500_000), settings)
    usage.add(Answer("a", prompt_tokens=1_000_000, completion_tokens=500_000, cached=True), settings)
    assert usage.as_dict() == {"requests": 1, "cached": 1, "prompt_tokens": 1_000_000, "completion_tokens": 500_000,
                               "cost": 2.0}
