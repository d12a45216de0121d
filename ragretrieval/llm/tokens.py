"""Token counts estimated from text, before anything is sent (``--dry-run``, ``--max-cost``): no tokenizer is
downloaded, so the estimate is arithmetic on characters (docs/answers/cost.md, "Cost before the bill").

- A text of n characters is ⌈n / 2⌉ tokens, whatever its script; a chat message adds `MESSAGE_TOKENS` (its role and
  separators, as chat formats count them). This is the rule of the test chat server (testing/chat_server.py), so a
  dry run there is within a few percent of what the run reports.
- Against real tokenizers the rule is in between on purpose: vendors give 0.25 (OpenAI: "about 4 characters of
  English") to 0.3 (DeepSeek) tokens per English character, so English is estimated 1.7 to 2 times too high (a
  budget errs on the safe side), and 0.6 tokens per Chinese character (DeepSeek), so Chinese is estimated about a
  sixth too low. `--max-cost` corrects itself: once the endpoint has answered, its reported prompt tokens over the
  estimate scale every later estimate (`Calibration`).
- Output tokens cannot be read from anything before the answer exists: callers give an expected length (the
  reference answer's, a judge's usual reply), and `--max-tokens` caps it.
"""

from __future__ import annotations

import math
import threading

CHARS_PER_TOKEN = 2
MESSAGE_TOKENS = 3


def estimate_tokens(text: str) -> int:
    """Tokens of `text` by the character rule: ⌈characters / 2⌉."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def body_tokens(body: dict) -> int:
    """Input tokens of one request body (chat ``messages`` or a completion ``prompt``)."""
    if "messages" in body:
        return sum(estimate_tokens(m.get("content") or "") + MESSAGE_TOKENS for m in body["messages"])
    return estimate_tokens(body.get("prompt", ""))


class Calibration:
    """The endpoint's reported prompt tokens over the estimate, over the requests it has answered so far: the factor
    that turns the character rule into this endpoint's tokenizer. Output tokens: the mean the endpoint reported."""

    def __init__(self, output_prior: int):
        self.output_prior = output_prior
        self._estimated = self._reported = self._outputs = self._answered = 0
        self._lock = threading.Lock()

    def add(self, estimated: int, reported: int, output: int) -> None:
        if reported <= 0:  # an endpoint that reports no usage teaches nothing
            return
        with self._lock:
            self._estimated += estimated
            self._reported += reported
            self._outputs += output
            self._answered += 1

    def input_tokens(self, estimated: int) -> int:
        with self._lock:
            scale = self._reported / self._estimated if self._estimated else 1.0
        return math.ceil(estimated * scale)

    def output_tokens(self) -> int:
        """The mean reply length reported so far, else the prior."""
        with self._lock:
            return math.ceil(self._outputs / self._answered) if self._answered else self.output_prior
