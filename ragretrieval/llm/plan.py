"""What a command would send, before it sends anything (``--dry-run``): every request, its estimated tokens and cost
at the given prices, and which ones the answer cache already holds (they cost nothing again). Estimates follow
llm/tokens.py; `CostPlan.lines` prints the table the commands show."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .tokens import CHARS_PER_TOKEN


@dataclass(frozen=True)
class PlannedRequest:
    who: str  # "generator", "judge score5", "questions"
    item: str  # the question or document it is for
    model: str
    input_tokens: int
    output_tokens: int
    cost: float  # 0 when cached
    cached: bool


@dataclass
class CostPlan:
    requests: list[PlannedRequest] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, client, who: str, item: str, messages: list[dict], *, sample: int = 0,
            output_tokens: int | None = None):
        """Plan `client`'s request for `messages` (nothing is sent); the cached answer when there is one."""
        body, cached = client.lookup(messages, sample=sample)
        tokens_in, tokens_out, cost = client.estimate(body, output_tokens)
        self.requests.append(PlannedRequest(who, item, client.settings.model, tokens_in, tokens_out,
                                            0.0 if cached else cost, cached is not None))
        return cached

    def totals(self) -> dict[str, dict]:
        """Per `who`: requests to send, from the cache, input and output tokens and cost of those to send."""
        rows: dict[str, dict] = defaultdict(lambda: {"model": "", "send": 0, "cached": 0, "input_tokens": 0,
                                                     "output_tokens": 0, "cost": 0.0})
        for r in self.requests:
            row = rows[r.who]
            row["model"] = r.model
            if r.cached:
                row["cached"] += 1
                continue
            row["send"] += 1
            row["input_tokens"] += r.input_tokens
            row["output_tokens"] += r.output_tokens
            row["cost"] += r.cost
        return dict(rows)

    @property
    def cost(self) -> float:
        return sum(r.cost for r in self.requests)

    @property
    def tokens(self) -> int:
        return sum(r.input_tokens + r.output_tokens for r in self.requests if not r.cached)

    def to_json(self) -> dict:
        return {"requests": sum(not r.cached for r in self.requests), "cached": sum(r.cached for r in self.requests),
                "input_tokens": sum(r.input_tokens for r in self.requests if not r.cached),
                "output_tokens": sum(r.output_tokens for r in self.requests if not r.cached),
                "cost": round(self.cost, 6), "by": {who: {**row, "cost": round(row["cost"], 6)}
                                                     for who, row in self.totals().items()},
                "notes": self.notes}

    def lines(self, verbose: bool = False) -> list[str]:
        rows = self.totals()
        width = max([len(w) for w in rows] + [len("total")])
        model_w = max([len(r["model"]) for r in rows.values()] + [len("model")])
        out = ["dry run: nothing was sent", f"  {'':<{width}}  {'model':<{model_w}}  {'requests':>8}  "
                                           f"{'cached':>6}  {'input tokens':>12}  {'output tokens':>13}  {'cost':>10}"]
        for who, r in rows.items():
            out.append(f"  {who:<{width}}  {r['model']:<{model_w}}  {r['send']:>8}  {r['cached']:>6}  "
                       f"{r['input_tokens']:>12}  {r['output_tokens']:>13}  {'$%.4f' % r['cost']:>10}")
        total = self.to_json()
        out.append(f"  {'total':<{width}}  {'':<{model_w}}  {total['requests']:>8}  {total['cached']:>6}  "
                   f"{total['input_tokens']:>12}  {total['output_tokens']:>13}  {'$%.4f' % total['cost']:>10}")
        if verbose:
            out += [f"  {r.who}: {r.item} ~{r.input_tokens}+{r.output_tokens} tokens"
                    + (" (cached)" if r.cached else f" ${r.cost:.6f}") for r in self.requests]
        out.append(f"note: tokens are estimated at {CHARS_PER_TOKEN} characters per token, whatever the language "
                   "(real tokenizers: English nearer 3-4 a token, Chinese nearer 1.7: docs/answers/cost.md, "
                   "\"Cost before the bill\"); "
                   "output tokens are expected lengths, and repair requests for malformed replies are not counted")
        return out + [f"note: {note}" for note in self.notes]
