"""``chunk_relevance``: is each context relevant to the question? One yes/no request per context (so a chunk judged
once for a question is never asked again, in any run), and the question's value is the share judged relevant:
``retrieval/llm_judged/chunk_relevance_precision``. The per-chunk verdicts are kept in ``details`` (position,
doc_id, chunk_id, rating, rationale). When any chunk's verdict fails the question has no precision (a failure naming
the chunk): a precision over the chunks that happened to parse would not be the run's precision. Needs contexts."""

from __future__ import annotations

from ...report import AnsweredQuestion
from ..base import JudgeResult
from ..llm_judge import Verdict, YesNoJudge


class ChunkRelevanceJudge(YesNoJudge):
    name = "chunk_relevance"
    metric = "retrieval/llm_judged/chunk_relevance_precision"
    placeholders = required = ("question", "passage")
    needs = ("contexts",)

    def units(self, answered: AnsweredQuestion) -> list[dict[str, str]]:
        return [{"question": answered.text, "passage": context.text} for context in answered.contexts]

    def combine(self, answered: AnsweredQuestion, verdicts: list[Verdict]) -> JudgeResult:
        details = [{"position": i, "doc_id": c.doc_id, "chunk_id": c.chunk_id, "rating": v.rating,
                    "rationale": v.reasoning, **({"failure": v.failure} if v.failure else {}),
                    **({"samples": v.samples} if v.samples else {})}
                   for i, (c, v) in enumerate(zip(answered.contexts, verdicts))]
        failed = next(((i, v) for i, v in enumerate(verdicts) if v.value is None), None)
        sampled = any(v.samples for v in verdicts)
        disagreement = any(v.disagreement for v in verdicts) if sampled else None
        if failed is not None:
            return self.result(verdicts, failure=f"chunk [{failed[0]}]: {failed[1].failure}", details=details,
                               disagreement=disagreement)
        relevant = sum(v.value for v in verdicts)
        return self.result(verdicts, value=relevant / len(verdicts), rating=f"{relevant:g}/{len(verdicts)}",
                           reasoning=f"{relevant:g} of {len(verdicts)} contexts relevant", details=details,
                           disagreement=disagreement)
