"""One failure class per question: why an answer went wrong (or right), decided from ids, spans and the checks, with no
model request (docs/answers/failure-classes.md, "Failure classes").

The evidence of one answered question:

- **expects an abstention**: its ``refuse`` check wants a refusal, or its legal ``conflict_gap`` check wants the
  answer to abstain (``should_abstain``). Read back from the check's value and the answer, so a stored run needs
  nothing more: the check is 1 exactly when what the answer did agrees with what was wanted.
- **refused**: the answer holds the run's refusal phrase (case-insensitive, the ``refuse`` check's rule); for a legal
  question, one of the benchmark's abstention phrases (the ``conflict_gap`` check's rule).
- **relevant context shown**: unknown when the question has no relevant document (or the contexts name no
  document); else ``AnsweredQuestion.evidence_shown`` when the session recorded it (a shown chunk overlaps a
  relevant span, or belongs to a relevant document that has no spans; a whole document shown holds its spans), else
  (a run stored before 0.3) whether a relevant document is among the contexts' documents.
- **passed**: every content signal the question has passes: ``include``, ``exclude`` and ``safe`` equal to 1, a legal
  question's ``pass_rate`` (its score >= 0.7), the ``correctness`` judge's yes, ``score5`` at 4 or 5. None: nothing
  checks the content. Citations are not a content signal: they decide ``unsupported_correct``.
- **uses relevant context**: the answer cites a relevant document, or (citing none) the ``groundedness`` judge says
  every claim is in the contexts. Unknown when the contexts name no document and no such judge spoke: a passing
  answer is then ``correct``, with a note that its support is unknown (never ``unsupported_correct``).

The decision list (the first rule that applies wins) is `classify`'s, in this order.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..analysis.class_transitions import ClassComparison, compare_labelled, transitions  # noqa: F401 (public)
from ..analysis.class_transitions import transition_lines as class_transition_lines
from ..evaluation.report import ANSWER_LEVEL
from .checks.legal import ABSTENTION_MARKERS, LEGAL_TYPES, contains

if TYPE_CHECKING:  # report.py prints itself through render.py, which reads this module
    from .report import AnsweredQuestion

NO_ANSWER = "no_answer"
CORRECT_ABSTENTION = "correct_abstention"
WRONG_ANSWER_INSTEAD = "wrong_answer_instead_of_abstaining"
RETRIEVAL_MISS = "retrieval_miss"
WRONG_ABSTENTION = "wrong_abstention"
GENERATION_ERROR = "generation_error"
UNVERIFIED = "unverified"
UNSUPPORTED_CORRECT = "unsupported_correct"
CORRECT = "correct"
# the decision list's order: also the order of every table that shows the classes
CLASSES = (NO_ANSWER, CORRECT_ABSTENTION, WRONG_ANSWER_INSTEAD, RETRIEVAL_MISS, WRONG_ABSTENTION, GENERATION_ERROR,
           UNVERIFIED, UNSUPPORTED_CORRECT, CORRECT)
CORRECTNESS_JUDGE = "response/llm_judged/correctness/rating"
GROUNDEDNESS_JUDGE = "response/llm_judged/groundedness/rating"
SCORE5 = "llm_judge_score"
SCORE5_PASS = 4  # the rubric's "right and nearly complete"


@dataclass(frozen=True)
class ClassRules:
    """What a run's classes depend on besides its questions: the refusal phrase its checks look for."""

    refusal_message: str

    @classmethod
    def of(cls, config) -> "ClassRules":
        """The rules of a run from its `AnswerConfig`."""
        return cls(config.checks.refusal_message)


def _legal(values: dict) -> bool:
    return any(kind in values for kind in LEGAL_TYPES)


def refused(answered: AnsweredQuestion, rules: ClassRules) -> bool:
    if rules.refusal_message and rules.refusal_message.lower() in answered.answer.lower():
        return True
    values = answered.metrics.get(ANSWER_LEVEL, {})
    return _legal(values) and any(contains(answered.answer, marker) for marker in ABSTENTION_MARKERS)


def expects_abstention(answered: AnsweredQuestion, rules: ClassRules) -> bool:
    """The question's checks want a refusal: read back from their values (1 when the answer did what was wanted)."""
    values = answered.metrics.get(ANSWER_LEVEL, {})
    if "refuse" in values:
        said = bool(rules.refusal_message) and rules.refusal_message.lower() in answered.answer.lower()
        return said == (values["refuse"] >= 1)
    if "abstention" in values:  # conflict_gap: abstained exactly when should_abstain
        said = any(contains(answered.answer, marker) for marker in ABSTENTION_MARKERS)
        return said == (values["abstention"] >= 1)
    return False


def relevant_documents(answered: AnsweredQuestion) -> set[str]:
    if answered.relevant_grades:
        return {doc for doc, grade in answered.relevant_grades.items() if grade > 0}
    return set(answered.relevant)


def evidence_shown(relevant: dict, contexts, offsets: dict) -> bool | None:
    """Whether the contexts hold a relevant span: `relevant` maps a relevant document's id to its spans (empty: the
    whole document), `offsets` a chunk id to its (start, end) in its document (a context without one is a whole
    document). None when nothing is relevant or no context names a document."""
    if not relevant:
        return None
    for context in contexts:
        spans = relevant.get(context.doc_id)
        if spans is None:
            continue
        where = offsets.get(context.chunk_id)
        if not spans or where is None or any(start < where[1] and where[0] < end for start, end in spans):
            return True
    return False if any(c.doc_id for c in contexts) else None


def relevant_shown(answered: AnsweredQuestion) -> bool | None:
    """Whether a relevant span or document was among the contexts; None when that cannot be known."""
    relevant = relevant_documents(answered)
    if not relevant:
        return None
    if answered.evidence_shown is not None:
        return answered.evidence_shown
    shown = {c.doc_id for c in answered.contexts if c.doc_id}
    return bool(relevant & shown) if shown else None


def passed(answered: AnsweredQuestion) -> bool | None:
    """Every content signal of the question passes; None when it has none."""
    values = answered.metrics.get(ANSWER_LEVEL, {})
    signals = [values[name] >= 1 for name in ("include", "exclude", "safe", "pass_rate", CORRECTNESS_JUDGE)
               if name in values]
    if SCORE5 in values:
        signals.append(values[SCORE5] >= SCORE5_PASS)
    return all(signals) if signals else None


def bare_contexts(answered: AnsweredQuestion) -> bool:
    """The answer was given contexts, and none names a document (an answers file's bare texts): what it cites cannot
    be told relevant or not."""
    return bool(answered.contexts) and not any(c.doc_id for c in answered.contexts)


def uses_relevant(answered: AnsweredQuestion) -> bool | None:
    """Whether the answer rests on relevant context; None when that cannot be known (no relevant document, or bare
    contexts and no ``groundedness`` verdict)."""
    relevant = relevant_documents(answered)
    if not relevant:
        return None
    if relevant & {c.doc_id for c in answered.citations if c.doc_id}:
        return True
    grounded = answered.metrics.get(ANSWER_LEVEL, {}).get(GROUNDEDNESS_JUDGE)
    if grounded is not None:
        return grounded >= 1
    return None if bare_contexts(answered) else False


def classify(answered: AnsweredQuestion, rules: ClassRules) -> str:
    """The question's one class: the first rule of the decision list that applies."""
    if answered.error is not None:
        return NO_ANSWER
    if expects_abstention(answered, rules):
        return CORRECT_ABSTENTION if refused(answered, rules) else WRONG_ANSWER_INSTEAD
    if relevant_shown(answered) is False:
        return RETRIEVAL_MISS
    if refused(answered, rules):
        return WRONG_ABSTENTION
    verdict = passed(answered)
    if verdict is False:
        return GENERATION_ERROR
    if verdict is None:
        return UNVERIFIED
    if uses_relevant(answered) is False:
        return UNSUPPORTED_CORRECT
    return CORRECT


def classify_all(questions: list[AnsweredQuestion], rules: ClassRules) -> dict[str, int]:
    """Set every question's `failure_class` and count them (every class, in the decision list's order)."""
    for answered in questions:
        answered.failure_class = classify(answered, rules)
    counts = Counter(q.failure_class for q in questions)
    return {name: counts.get(name, 0) for name in CLASSES}


UNKNOWN_SUPPORT_NOTE = "classed correct with support unknown"


def support_notes(questions: list[AnsweredQuestion]) -> list[str]:
    """The run's note on correct questions whose support could not be decided (their contexts name no document)."""
    unknown = [q.id for q in questions if q.failure_class == CORRECT and relevant_documents(q)
               and uses_relevant(q) is None]
    if not unknown:
        return []
    shown = ", ".join(unknown[:5]) + (", ..." if len(unknown) > 5 else "")
    return [f"{len(unknown)} question(s) {UNKNOWN_SUPPORT_NOTE}: their contexts name no document, so whether the "
            f"answer rests on relevant context is not known ({shown}); give contexts with doc ids, or a groundedness "
            "judge, to tell"]


def report_classes(report) -> list[str]:
    """Each question's class of a stored answer report, in question order (computed again, so a run stored before
    classes existed has them too)."""
    rules = ClassRules.of(report.config)
    return [classify(q, rules) for q in report.questions]


def compare_classes(labelled_reports: list[tuple[str, object]]) -> ClassComparison:
    """The classes of answer reports (label, report), each run after the first paired with the first by id."""
    return compare_labelled([(label, dict(zip((q.id for q in report.questions), report_classes(report))))
                             for label, report in labelled_reports], CLASSES)


def transition_lines(label_a: str, label_b: str, moved: dict[tuple[str, str], int]) -> list[str]:
    """The transition table of two runs' classes, rows and columns in the decision list's order."""
    return class_transition_lines(label_a, label_b, moved, CLASSES)
