"""``nuggets``: which of the question's nuggets (its atomic facts, data/nuggets.py) the answer holds, the TREC 2024 RAG
track's nugget evaluation (docs/answers/nuggets.md, "Nugget evaluation").

The nuggets come from ``nuggets.jsonl`` (`JudgeOptions.nuggets`), written beforehand by ``ragretrieval questions
nuggets`` or by hand. They are asked about `JudgeOptions.nugget_batch` at a time (default 10): one request per batch
shows the question, the answer and the batch's nuggets numbered 1..k, and the reply gives one verdict per nugget,
``support``, ``partial_support`` or ``not_support``. With n nuggets, v of them vital, and per nugget s_i = 1 for
support (else 0) and c_i = 1, 0.5, 0 for support, partial_support, not_support, the question's scores are

- ``response/llm_judged/nuggets/all_strict`` = Σ s_i / n (the judge's value);
- ``response/llm_judged/nuggets/all_partial`` = Σ c_i / n;
- ``response/llm_judged/nuggets/vital_strict`` = Σ_vital s_i / v and ``.../vital_partial`` = Σ_vital c_i / v, only
  when v > 0 (a question without vital nuggets has no vital score; it is never 0 or 1).

A question without nuggets (none in the file, or an empty list) is skipped as not applicable; when any batch's
verdict fails the question has no scores (a failure naming the nuggets), as a share over the batches that happened
to parse would not be the answer's. Each nugget's verdict is kept in ``details`` (nugget, text, importance, verdict),
which the HTML report's and the web app's cards list. With ``--judge-samples N`` each nugget's verdict is the
majority of its samples (a tie goes to the lower credit).
"""

from __future__ import annotations

from ....data.nuggets import Nugget, QuestionNuggets, nuggets_fingerprint, read_nuggets
from ...report import AnsweredQuestion
from ..base import REPLY_TOKENS, JudgeContext, JudgeError, JudgeResult
from ..llm_judge import LLMJudge, Verdict, majority
from .schema import SHAPE, VERDICTS, NuggetVerdictsReply, parse_verdicts

PREFIX = "response/llm_judged/nuggets/"
ALL_STRICT, ALL_PARTIAL = PREFIX + "all_strict", PREFIX + "all_partial"
VITAL_STRICT, VITAL_PARTIAL = PREFIX + "vital_strict", PREFIX + "vital_partial"
NUGGET_METRICS = (ALL_STRICT, ALL_PARTIAL, VITAL_STRICT, VITAL_PARTIAL)
NO_NUGGETS = "no nuggets"
_LABEL = {credit: label for label, credit in VERDICTS.items()}


def nugget_scores(verdicts: list[str], importances: list[str]) -> dict[str, float]:
    """The four scores of one answer from its nuggets' verdicts and importances (the formulas above)."""
    strict = [float(v == "support") for v in verdicts]
    partial = [VERDICTS[v] for v in verdicts]
    vital = [i for i, importance in enumerate(importances) if importance == "vital"]
    scores = {ALL_STRICT: sum(strict) / len(verdicts), ALL_PARTIAL: sum(partial) / len(verdicts)}
    if vital:
        scores[VITAL_STRICT] = sum(strict[i] for i in vital) / len(vital)
        scores[VITAL_PARTIAL] = sum(partial[i] for i in vital) / len(vital)
    return scores


class NuggetsJudge(LLMJudge):
    name = "nuggets"
    metric = ALL_STRICT
    reply = NuggetVerdictsReply
    shape = SHAPE
    placeholders = required = ("question", "answer", "nuggets")

    def __init__(self, context: JudgeContext):
        options = context.options
        if options.nuggets is None:
            raise JudgeError("the nuggets judge needs the questions' nuggets (field nuggets: a nuggets.jsonl file); "
                             "write them with `ragretrieval questions nuggets DATASET`")
        self.nuggets: dict[str, QuestionNuggets] = read_nuggets(options.nuggets)
        self.batch = options.nugget_batch
        self.fingerprint = nuggets_fingerprint(self.nuggets.values())
        super().__init__(context)

    def settings(self) -> dict:
        return {**super().settings(), "nuggets": self.fingerprint, "nugget_batch": self.batch}

    def not_applicable(self, answered: AnsweredQuestion) -> str | None:
        found = self.nuggets.get(answered.id)
        return NO_NUGGETS if found is None or not found.nuggets else None

    def batches(self, answered: AnsweredQuestion) -> list[list[Nugget]]:
        nuggets = self.nuggets[answered.id].nuggets
        return [nuggets[start:start + self.batch] for start in range(0, len(nuggets), self.batch)]

    def units(self, answered: AnsweredQuestion) -> list[dict[str, str]]:
        """One request's values per batch of nuggets, numbered 1..k."""
        return [{"question": answered.text, "answer": answered.answer,
                 "nuggets": "\n".join(f"{i}. {nugget.text}" for i, nugget in enumerate(batch, start=1))}
                for batch in self.batches(answered)]

    def reply_tokens(self, values: dict[str, str]) -> int:
        return REPLY_TOKENS + 8 * values["nuggets"].count("\n")  # a verdict word per nugget beyond the first

    def judge(self, answered: AnsweredQuestion) -> JudgeResult:
        reason = self.not_applicable(answered)
        if reason is not None:
            return JudgeResult(skipped=reason)
        asked = [(batch, *self.ask_batch(values, len(batch)))
                 for batch, values in zip(self.batches(answered), self.units(answered))]
        return self.combine_batches(asked)

    def ask_batch(self, values: dict[str, str], size: int) -> tuple[list[list[float]], Verdict]:
        """Each nugget's sampled credits (one list per nugget; empty lists when the batch failed) and the verdict
        holding the answers taken, the reasoning and any failure."""
        replies, verdict = self.ask_samples(values, lambda text: parse_verdicts(text, size))
        if not replies:
            return [[] for _ in range(size)], verdict
        verdict.reasoning = " ".join(dict.fromkeys(r.reasoning for r in replies if r.reasoning))
        return [[VERDICTS[reply.verdicts[i]] for reply in replies] for i in range(size)], verdict

    def combine_batches(self, asked: list[tuple[list[Nugget], list[list[float]], Verdict]]) -> JudgeResult:
        sampled = self.context.options.samples > 1
        details, failure, reasons, start = [], None, [], 1
        for batch, credits, verdict in asked:
            if verdict.failure and failure is None:
                failure = f"nuggets {start}-{start + len(batch) - 1}: {verdict.failure}"
            if verdict.reasoning:
                reasons.append(verdict.reasoning)
            for offset, (nugget, samples) in enumerate(zip(batch, credits)):
                detail = {"nugget": start + offset, "text": nugget.text, "importance": nugget.importance,
                          "verdict": _LABEL[majority(samples)] if samples else None}
                if verdict.failure:
                    detail["failure"] = verdict.failure
                if sampled and samples:
                    detail["samples"] = samples
                details.append(detail)
            start += len(batch)
        verdicts = [d["verdict"] for d in details]
        disagreement = any(len(set(d.get("samples", []))) > 1 for d in details) if sampled else None
        verdicts_taken = [verdict for _, _, verdict in asked]
        if failure is not None:
            return self.result(verdicts_taken, failure=failure, details=details, disagreement=disagreement)
        scores = nugget_scores(verdicts, [d["importance"] for d in details])
        supported = verdicts.count("support")
        partly = verdicts.count("partial_support")
        vital = [d["verdict"] for d in details if d["importance"] == "vital"]
        summary = (f"{supported} of {len(verdicts)} nuggets supported, {partly} partly; vital: "
                   f"{vital.count('support')} of {len(vital)} supported")
        return self.result(verdicts_taken, value=scores[ALL_STRICT], rating=f"{supported}/{len(verdicts)}",
                           reasoning=summary + (f". {' '.join(dict.fromkeys(reasons))}" if reasons else ""),
                           details=details,
                           metrics=scores, disagreement=disagreement)
