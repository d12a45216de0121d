"""``answer --dry-run`` and ``judge-answers --dry-run``: every request the command would send, with its estimated
tokens and cost, and nothing sent (docs/answers/cost.md, "Cost before the bill").

- The generator: an ``openai:`` generator's request for each question not in the journal, its prompt rendered exactly
  as the run would; expected output: the reference answer's length when there is one (else the client's prior),
  capped by ``--max-tokens``. An answer the cache holds is shown as cached (it costs nothing again) and its text
  is what the judges are planned on. ``extractive`` and ``file:`` answer locally and are run (they send nothing);
  ``http:`` services are counted as requests to the service, at no estimated cost.
- The judges: each judge's requests for each question (``LLMJudge.planned``: one per unit, chunk or nugget batch,
  times ``--judge-samples``) on the answer the question would have: the cached one, else its reference answer as a
  stand-in of the expected length.
"""

from __future__ import annotations

from ..llm.journal import Journal
from ..llm.plan import CostPlan
from ..llm.tokens import estimate_tokens
from .batch import RETRIEVAL_BLOCK, journaled
from .generators import GenerationFailed, GenerationRequest
from .judges.audit import padded, shuffled
from .report import AnsweredQuestion
from .session import AnswerSession
from .stored_judging import JudgedQuestion, check_conflicts, judging_key, pending

LOCAL_GENERATORS = ("extractive", "file")  # they send nothing: a dry run runs them


def _answer(session: AnswerSession, plan: CostPlan, question, contexts) -> tuple[str, list]:
    """The answer the judges are planned on, and its contexts; the generator's request planned on the way."""
    generator, request = session.generator, GenerationRequest(question, contexts, session.refusal, session.language)
    client = getattr(generator, "client", None)
    if client is not None and hasattr(generator, "messages"):
        expected = estimate_tokens(question.ground_truth) if question.ground_truth else None
        cached = plan.add(client, "generator", question.id, generator.messages(request), output_tokens=expected)
        return (cached.text if cached else question.ground_truth or ""), contexts
    if generator.spec.partition(":")[0] in LOCAL_GENERATORS:
        try:
            made = generator.generate(request)
        except GenerationFailed:
            return "", contexts
        return made.answer, made.contexts if made.contexts is not None else contexts
    plan.notes.append(f"{generator.spec}: one request per question to the service, whose cost is not estimated")
    return question.ground_truth or "", contexts


def plan_judges(plan: CostPlan, judges, answered: AnsweredQuestion, role: str = "") -> None:
    for judge in judges:
        if not hasattr(judge, "planned"):
            continue
        for messages, sample, reply in judge.planned(answered):
            plan.add(judge.client, f"judge {judge.name}{role}", answered.id, messages, sample=sample,
                     output_tokens=reply)


def audit_asks(judges, questions: list[AnsweredQuestion], repeats: int,
               seed: int = 0) -> list[tuple[list, AnsweredQuestion]]:
    """The audit's requests (judges/audit.py) as (judges, question) pairs: repeats 1.. of each verdict, then the
    shuffled and padded variants; repeat 0 is the run's own verdict, planned with the judging."""
    asks: list[tuple[list, AnsweredQuestion]] = []
    for judge in (j for j in judges if hasattr(j, "repeated")):
        reads = set(judge.placeholders)
        for answered in (q for q in questions if q.error is None):
            asks += [([judge.repeated(r * judge.context.options.samples)], answered) for r in range(1, repeats)]
            variants = [shuffled(answered, seed)] if "contexts" in reads else []
            variants += [padded(answered, judge.context.options.language)] if "answer" in reads else []
            asks += [([judge], variant) for variant in variants if variant is not None]
    return asks


def unplanned(judges) -> list[str]:
    """Judges that ask a model but cannot say their requests beforehand (plug-ins not built on LLMJudge)."""
    return [j.name for j in judges if getattr(j, "usage", None) is not None and not hasattr(j, "planned")]


def plan_answers(session: AnswerSession, journal_path=None) -> CostPlan:
    """What `run_answers` would send for `session` (its judges included), with nothing sent."""
    plan = CostPlan()
    done = journaled(session, journal_path)
    todo = [q for q in session.dataset.questions if q.id not in done]
    if done:
        plan.notes.append(f"{len(done)} of {len(session.dataset.questions)} questions are in the journal and are "
                          "not asked again")
    judges = [s for s in session.scorers if hasattr(s, "planned") or getattr(s, "usage", None) is not None]
    for start in range(0, len(todo), RETRIEVAL_BLOCK):
        block = todo[start:start + RETRIEVAL_BLOCK]
        for question, retrieved in zip(block, session.retrieve_many(block)):
            contexts = (retrieved.contexts if retrieved else
                        session.given_contexts(question) if session.mode == "given" else [])
            answer, contexts = _answer(session, plan, question, contexts)
            plan_judges(plan, judges, AnsweredQuestion(
                id=question.id, text=question.text, ground_truth=question.ground_truth, answer=answer,
                contexts=list(contexts)))
    plan.notes += [f"judge {name}: its requests cannot be planned (it is not an LLMJudge)" for name in
                   unplanned(judges)]
    plan.notes = list(dict.fromkeys(plan.notes))
    return plan


def plan_judging(report, judges, journal_path=None, replace: bool = False, repeats: int = 1) -> CostPlan:
    """What `judge_report` would send to judge the stored run `report`, with nothing sent."""
    check_conflicts(report, judges, replace)
    plan = CostPlan()
    journal = Journal(journal_path, JudgedQuestion) if journal_path else None
    questions, wanted, done = pending(report, judges, journal, judging_key(report, judges))
    if done:
        plan.notes.append(f"{len(done)} questions are in the journal and are not judged again")
    kept = sum(1 for q in questions if q.error is None and q.id not in wanted and q.id not in done)
    if kept:
        plan.notes.append(f"{kept} questions already hold these judges' verdicts and are not judged again")
    asks = [(wanted[q.id], q, "") for q in questions if q.id in wanted]
    asks += [(asked, q, " (audit)") for asked, q in (audit_asks(judges, questions, repeats) if repeats > 1 else [])]
    for asked, answered, role in asks:
        plan_judges(plan, asked, answered, role)
    plan.notes += [f"judge {name}: its requests cannot be planned (it is not an LLMJudge)" for name in
                   unplanned(judges)]
    return plan
