"""A chat server that plays generator and judge: requests for model ``gen-model`` get an answer quoting the first
numbered context (cited), requests for ``judge-model`` a verdict computed by rules from the texts the judge's prompt
frames in ``<<<``/``>>>`` blocks, so every test knows which verdict to expect."""

from __future__ import annotations

import json
import re

import pytest

from ragretrieval.testing.chat_server import ChatServer, Reply
from ragretrieval.work.progress import RecordingProgress
from ragretrieval.work.stop import StopToken

BLOCK = re.compile(r"<<<\n(.*?)\n>>>", re.S)
NUMBERED = re.compile(r"^\[(\d+)\] (.*)$", re.M)
# a phrase of each judge's default prompt, English and Chinese, that tells the judges apart
MARKERS = {
    "score5": ("score it from 1 to 5", "给它打 1 到 5 分"),
    "correctness": ("is correct with respect to a reference", "相对于参考答案是否正确"),
    "groundedness": ("is grounded in the contexts", "是否完全基于提供给它的上下文"),
    "relevance_to_query": ("addresses the question that was asked", "是否针对所提的问题"),
    "safety": ("is safe to show", "是否可以安全地展示"),
    "chunk_relevance": ("retrieved passage is relevant", "一段检索到的文本是否与问题相关"),
    "context_sufficiency": ("are enough to give the reference answer", "是否足以给出问题的参考答案"),
    "nuggets": ("which facts an answer holds", "请检查一个回答包含了哪些事实"),
}
UNSAFE = ("炸药", "explosive")


def which_judge(prompt: str) -> str:
    return next(name for name, phrases in MARKERS.items() if any(p in prompt for p in phrases))


def share(wanted: str, found: str) -> float:
    """The share of `wanted`'s distinct letters and digits that `found` holds."""
    letters = {ch for ch in wanted if ch.isalnum()}
    return len(letters & set(found)) / len(letters) if letters else 0.0


def bigrams(text: str) -> set[str]:
    letters = [ch for ch in text if ch.isalnum()]
    return {a + b for a, b in zip(letters, letters[1:])}


def verdict(name: str, blocks: list[str]) -> dict:
    """The verdict of judge `name` on the framed texts, by simple rules."""
    yes = lambda flag, why: {"rating": "yes" if flag else "no", "rationale": why}  # noqa: E731
    if name == "score5":
        question, truth, answer = blocks
        return {"score": 1 + round(4 * share(truth, answer)), "reasoning": f"covers {share(truth, answer):.0%}"}
    if name == "correctness":
        question, truth, answer = blocks
        return yes(share(truth, answer) >= 0.6, "matches the reference")
    if name == "groundedness":
        question, contexts, answer = blocks
        return yes(share(answer.split("[")[0], contexts) >= 0.8, "found in the contexts")
    if name == "relevance_to_query":
        question, answer = blocks
        return yes(bool(bigrams(question) & bigrams(answer)), "on the question")
    if name == "safety":
        question, answer = blocks
        return yes(not any(word in answer for word in UNSAFE), "nothing harmful")
    if name == "nuggets":  # per nugget: support when the answer holds its letters, partly when half of them
        question, answer, nuggets = blocks
        shares = [share(line.split(". ", 1)[1], answer) for line in nuggets.splitlines()]
        return {"verdicts": ["support" if s >= 0.8 else "partial_support" if s >= 0.5 else "not_support"
                             for s in shares], "reasoning": "letters found"}
    if name == "chunk_relevance":
        question, passage = blocks
        return yes(len(bigrams(question) & bigrams(passage)) >= 2, "shares the question's words")
    question, truth, contexts = blocks
    return yes(share(truth, contexts) >= 0.6, "holds the reference's facts")


def answer_first(prompt: str) -> str:
    first = NUMBERED.search(prompt)
    return f"{first.group(2)[:30]} [{first.group(1)}]" if first else "I could not find the answer"


def plays_both(request: dict) -> Reply:
    prompt = request["messages"][-1]["content"] if "messages" in request else request["prompt"]
    if request["model"] != "judge-model":
        return Reply(answer_first(prompt))
    if len(request.get("messages", [])) > 1:  # a repair request: answer well this time
        prompt = request["messages"][0]["content"]
    name = which_judge(prompt)
    return Reply(json.dumps(verdict(name, BLOCK.findall(prompt)), ensure_ascii=False))


@pytest.fixture
def judge_server():
    with ChatServer(plays_both) as server:
        yield server


def judge_requests(server, name: str | None = None) -> int:
    """Requests the server got for the judge model (of one judge)."""
    return server.count(lambda r: r["model"] == "judge-model" and (
        name is None or which_judge(r["messages"][0]["content"]) == name))


class StopAfter(RecordingProgress):
    """A progress that asks `stop` to stop once `n` questions of the stage are done."""

    def __init__(self, n: int, stop: StopToken):
        super().__init__()
        self.n, self.stop = n, stop

    def advance(self, n=1, status=None):
        super().advance(n, status)
        if self.stages[-1][2] == self.n:
            self.stop.request("enough for now")
