"""Judges that ask a model, through the client every LLM feature shares (llm/client.py: answer cache, retries, the
bill) and the ask-parse-repair step of the chunk judge (`llm.replies.ask_parsed`).

A judge's prompt is a ``$name`` template (llm/prompts.py) in its own folder, ``templates/{name}_{zh,en}.md``, or the
user's file (``--judge-prompt``). It sees the placeholders the judge declares:

- ``$question``: the question; ``$ground_truth``: the reference answer; ``$answer``: the answer judged;
- ``$contexts``: the contexts the answer was given, numbered as its citations are (``[0] text``, blank line between);
- ``$passage``: one context (chunk_relevance asks once per context).

Each request is one user message; the reply must be JSON of the judge's schema. A malformed reply gets one repair
request, then the unit fails. With ``--judge-samples N`` every request is asked N times (told apart in the cache by a
sample number, so a re-run asks none of them again) at a temperature above 0; the verdict is the majority (a tie goes
to the lower value: the cautious side), and the question records each sample and whether they disagreed. A request
the endpoint refuses (HTTP 400, 413, 422: a context too long) fails that question's verdict; any other error that
outlasts the retries (a bad key, an endpoint that stays down) stops the run.
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import BaseModel

from ...llm.cache import Answer
from ...llm.client import LLMError, price
from ...llm.prompts import PromptSpec
from ...llm.replies import ask_parsed, parse_object
from ..report import AnsweredQuestion
from .base import LANGUAGES, REPLY_TOKENS, BaseJudge, JudgeContext, JudgeResult, package_of
from .schema import YES_NO_SHAPE, YesNoReply


@dataclass
class Verdict:
    """One request's verdict (the whole answer, or one chunk) after its samples."""

    value: float | None = None
    rating: str | int | None = None
    reasoning: str = ""
    failure: str | None = None
    samples: list[float] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)

    @property
    def disagreement(self) -> bool:
        return len(set(self.samples)) > 1


def majority(values: list[float]) -> float:
    """The most frequent value; a tie goes to the lowest of the tied values."""
    counts = Counter(values)
    top = max(counts.values())
    return min(value for value, count in counts.items() if count == top)


def numbered(answered: AnsweredQuestion) -> str:
    return "\n\n".join(f"[{i}] {c.text}" for i, c in enumerate(answered.contexts))


class LLMJudge(BaseJudge):
    reply: ClassVar[type[BaseModel]]  # the reply's schema: gives value, rating, reasoning
    shape: ClassVar[str]  # the reply's shape, quoted back to the model in a repair request
    placeholders: ClassVar[tuple[str, ...]]  # what the prompt may use
    required: ClassVar[tuple[str, ...]]  # what a prompt must use
    needs: ClassVar[tuple[str, ...]] = ()  # "ground_truth", "contexts": without them the judge does not apply
    sample_offset = 0  # the first sample number asked: a repeat of the audit asks new samples (judges/audit.py)

    def __init__(self, context: JudgeContext):
        self.context = context
        self.prompt = context.prompt(self.prompt_spec())
        self.client = context.client

    @classmethod
    def build(cls, context: JudgeContext) -> "LLMJudge":
        return cls(context)

    @property
    def usage(self):
        """The bill of the client the run's judges share (the progress bar shows it)."""
        return self.client.usage

    @classmethod
    def prompt_spec(cls) -> PromptSpec:
        return PromptSpec(cls.name, package_of(cls), "templates", cls.placeholders, cls.required, LANGUAGES)

    def settings(self) -> dict:
        options = self.context.options
        return {**self.client.settings.public(), "samples": options.samples, "language": options.language,
                "prompt": self.prompt.source, "prompt_hash": self.prompt.hash}

    # ------------------------------------------------------------------------------------------------ judging
    def not_applicable(self, answered: AnsweredQuestion) -> str | None:
        if "ground_truth" in self.needs and not (answered.ground_truth or "").strip():
            return "no reference answer"
        if "contexts" in self.needs and not answered.contexts:
            return "no contexts"
        return None

    def values(self, answered: AnsweredQuestion) -> dict[str, str]:
        """What the prompt's placeholders are filled with."""
        every = {"question": answered.text, "ground_truth": answered.ground_truth or "", "answer": answered.answer,
                 "contexts": numbered(answered) if "contexts" in self.placeholders else ""}
        return {name: every[name] for name in self.placeholders if name in every}

    def units(self, answered: AnsweredQuestion) -> list[dict[str, str]]:
        """One request's values per verdict to ask for: one for the whole answer (chunk_relevance: one per chunk)."""
        return [self.values(answered)]

    def messages(self, values: dict[str, str]) -> list[dict]:
        """The one user message of a request: the prompt filled with `values`."""
        return [{"role": "user", "content": self.prompt.fill(**values)}]

    def reply_tokens(self, values: dict[str, str]) -> int:
        """The reply's expected length in tokens, for estimates before anything is asked (``--dry-run``)."""
        return REPLY_TOKENS

    def planned(self, answered: AnsweredQuestion) -> list[tuple[list[dict], int, int]]:
        """(messages, sample number, expected reply tokens) of every request `judge` would send for `answered`,
        repairs aside (they depend on the replies); none when the judge does not apply."""
        if self.not_applicable(answered) is not None:
            return []
        samples = range(self.sample_offset, self.sample_offset + self.context.options.samples)
        return [(self.messages(values), sample, self.reply_tokens(values))
                for values in self.units(answered) for sample in samples]

    def repeated(self, offset: int) -> "LLMJudge":
        """This judge asking samples from `offset` on: the same requests, cached apart, so each repeat is a fresh
        verdict (judges/audit.py); the copy shares the client and its bill."""
        again = copy.copy(self)
        again.sample_offset = offset
        return again

    def judge(self, answered: AnsweredQuestion) -> JudgeResult:
        reason = self.not_applicable(answered)
        if reason is not None:
            return JudgeResult(skipped=reason)
        return self.combine(answered, [self.ask(values) for values in self.units(answered)])

    def parse(self, text: str):
        return parse_object(self.reply, text, self.shape)

    def ask(self, values: dict[str, str]) -> Verdict:
        replies, verdict = self.ask_samples(values, self.parse)
        if not replies:
            return verdict
        verdict.samples = [reply.value for reply in replies] if self.context.options.samples > 1 else []
        verdict.value = majority([reply.value for reply in replies])
        chosen = next(reply for reply in replies if reply.value == verdict.value)
        verdict.rating, verdict.reasoning = chosen.rating, chosen.reasoning
        return verdict

    def ask_samples(self, values: dict[str, str], parse) -> tuple[list, Verdict]:
        """Every sample's parsed reply to the prompt filled with `values`, and a `Verdict` holding the answers
        they took and, when no sample gave a usable reply, the failure."""
        options = self.context.options
        messages = self.messages(values)
        verdict, replies, reasons = Verdict(), [], []
        for sample in range(self.sample_offset, self.sample_offset + options.samples):
            try:
                asked = ask_parsed(self.client, messages, parse, options.language, sample=sample)
            except LLMError as error:
                if not error.per_request:  # the endpoint is down or refuses every request
                    raise
                reasons.append(str(error))
                continue
            verdict.answers += asked.answers
            (replies.append(asked.value) if asked.value is not None else reasons.append(asked.reason))
        if not replies:
            verdict.failure = reasons[0] if len(set(reasons)) == 1 else "; ".join(dict.fromkeys(reasons))
        return replies, verdict

    def combine(self, answered: AnsweredQuestion, verdicts: list[Verdict]) -> JudgeResult:
        """The question's result from its verdicts (one here; chunk_relevance overrides)."""
        one = verdicts[0]
        return self.result(verdicts, value=one.value, rating=one.rating, reasoning=one.reasoning,
                           failure=one.failure, samples=one.samples,
                           disagreement=one.disagreement if one.samples else None)

    def result(self, verdicts: list[Verdict], **fields) -> JudgeResult:
        """`fields` with what every answer behind `verdicts` took: tokens, cost, time, requests."""
        answers = [answer for verdict in verdicts for answer in verdict.answers]
        settings = self.client.settings
        return JudgeResult(**fields, input_tokens=sum(a.prompt_tokens for a in answers),
                           output_tokens=sum(a.completion_tokens for a in answers),
                           cost=round(sum(price(a, settings) for a in answers), 8),
                           latency=sum(a.latency for a in answers), requests=len(answers),
                           cached=bool(answers) and all(a.cached for a in answers))


class YesNoJudge(LLMJudge):
    """A judge whose verdict is yes (1) or no (0) with a rationale."""

    reply = YesNoReply
    shape = YES_NO_SHAPE
