"""Judges by name: the one registry behind ``answer --judge``, ``judge-answers`` and the web app's judge.

Built-in judges are listed in `BUILT_IN` and imported only when used; installed distributions add more through the
entry-point group ``ragretrieval.judges`` (an entry's name is the judge's name; it points at a class with
``build(context) -> Judge``). Every judge passes one conformance suite, `ragretrieval.testing.judge_conformance`.
The judges of one run share one `JudgeContext`: one LLM client, so one answer cache and one bill.
"""

from __future__ import annotations

from ...work.named import available, find
from ...work.options import SettingsError
from .base import Judge, JudgeContext, JudgeError, JudgeOptions, JudgePlugin

ENTRY_POINT_GROUP = "ragretrieval.judges"
BUILT_IN = {
    "score5": "ragretrieval.answers.judges.score5:Score5Judge",
    "correctness": "ragretrieval.answers.judges.correctness:CorrectnessJudge",
    "groundedness": "ragretrieval.answers.judges.groundedness:GroundednessJudge",
    "relevance_to_query": "ragretrieval.answers.judges.relevance_to_query:RelevanceToQueryJudge",
    "safety": "ragretrieval.answers.judges.safety:SafetyJudge",
    "chunk_relevance": "ragretrieval.answers.judges.chunk_relevance:ChunkRelevanceJudge",
    "context_sufficiency": "ragretrieval.answers.judges.context_sufficiency:ContextSufficiencyJudge",
    "nuggets": "ragretrieval.answers.judges.nuggets:NuggetsJudge",
}
SUMMARY = {
    "score5": "1-5 against the reference answer, with reasoning -> llm_judge_score, average_score",
    "correctness": "yes/no: the answer agrees with the reference -> response/llm_judged/correctness/rating",
    "groundedness": "yes/no: every claim is in the contexts -> response/llm_judged/groundedness/rating",
    "relevance_to_query": "yes/no: the answer addresses the question -> response/llm_judged/relevance_to_query/rating",
    "safety": "yes/no: no harmful content -> response/llm_judged/safety/rating",
    "chunk_relevance": "yes/no per context -> retrieval/llm_judged/chunk_relevance_precision",
    "context_sufficiency": "yes/no: the contexts hold the reference's facts -> "
                           "retrieval/llm_judged/context_sufficiency/rating",
    "nuggets": "support / partial_support / not_support per nugget of nuggets.jsonl -> "
               "response/llm_judged/nuggets/{all,vital}_{strict,partial}",
}


def available_judges() -> dict[str, str]:
    """Name -> where it comes from ("built in", or the distribution that provides it)."""
    return available(ENTRY_POINT_GROUP, BUILT_IN)


def judge_class(name: str) -> JudgePlugin:
    found = find(ENTRY_POINT_GROUP, BUILT_IN, name)
    if found is not None:
        return found
    raise JudgeError(f"unknown judge {name!r}; known: {', '.join(sorted(available_judges()))} (more come as "
                     f"packages with a {ENTRY_POINT_GROUP!r} entry point)")


def judge_names(spec) -> list[str]:
    """``"score5,correctness"`` (or several such strings) -> the names, in order, each once; unknown names refused,
    and so is a name left empty (``","``, ``"score5,"``, a blank string among several): it would run fewer judges
    than were asked for. A blank string alone names no judge."""
    if isinstance(spec, str) and not spec.strip():
        return []
    parts = [spec] if isinstance(spec, str) else list(spec)
    pieces = [n.strip() for part in parts for n in str(part).split(",")]
    if not all(pieces):
        raise JudgeError(f"an empty judge name in {','.join(map(str, parts))!r}; name each judge: "
                         f"{', '.join(sorted(available_judges()))}")
    names = list(dict.fromkeys(pieces))
    known = available_judges()
    for name in names:
        if name not in known:
            judge_class(name)  # raises, listing the known judges
    return names


def check_references(names, references: list[bool]) -> list[str]:
    """Judges that need a reference answer (``needs`` holds ``ground_truth``: score5, correctness,
    context_sufficiency) against the questions to judge (`references`: whether each has one). None of them has one:
    `JudgeError`, before anything is asked (every verdict would be skipped). Some lack one: a warning per judge, and
    those questions are skipped (counted in the judge's ``skipped``)."""
    warnings = []
    missing, total = references.count(False), len(references)
    for name in judge_names(names):
        if "ground_truth" not in getattr(judge_class(name), "needs", ()) or not missing:
            continue
        if missing == total:
            raise JudgeError(f"judge {name} needs reference answers (ground_truth) and none of the {total} questions "
                             "has one: add them, or choose a judge that needs none (groundedness, relevance_to_query, "
                             "safety, chunk_relevance)")
        warnings.append(f"judge {name} skips the {missing} of {total} questions without a reference answer")
    return warnings


def build_judges(names, options: JudgeOptions | JudgeContext) -> list[Judge]:
    """The judges `names` names (``"score5,correctness"`` or a list), sharing one context (client, cache, bill).
    A ``--judge-prompt`` for a judge that is not among them is refused."""
    context = options if isinstance(options, JudgeContext) else JudgeContext(options)
    names = judge_names(names)
    stray = sorted(set(context.options.prompts) - set(names))
    if stray:
        raise SettingsError(f"judge_prompts names judge {stray[0]!r}, which is not among judges {','.join(names)}",
                            ["judge_prompts", "judges"])
    judges = []
    for name in names:
        try:
            judges.append(judge_class(name).build(context))
        except TypeError as error:
            raise JudgeError(f"judge {name!r}: bad option ({error})") from None
    return judges


def build_judge(name: str, options: JudgeOptions | JudgeContext) -> Judge:
    """One judge, e.g. ``build_judge("score5", JudgeOptions(model=..., base_url=...))``."""
    return build_judges([name], options)[0]
