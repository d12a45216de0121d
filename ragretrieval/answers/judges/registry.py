"""Judges by name: the one registry behind ``answer --judge``, ``judge-answers`` and the web app's judge.

The names are `JUDGES`, this kind's `Registry` (work/plugins.py): the built-in judges, imported only when used, and
those installed distributions add through the entry-point group ``ragretrieval.judges`` (an entry's name is the judge's
name; it points at a class with ``build(context) -> Judge``). Every judge passes one conformance suite,
`ragretrieval.testing.judge_conformance`. The judges of one run share one `JudgeContext`: one LLM client, so one answer
cache and one bill."""

from __future__ import annotations

from ...work.named import UnknownPluginError
from ...work.options import SettingsError
from ...work.plugins import JUDGES
from .base import Judge, JudgeContext, JudgeError, JudgeOptions, JudgePlugin

ENTRY_POINT_GROUP = JUDGES.group
BUILT_IN = {entry.name: entry.target for entry in JUDGES.built_in}  # name -> "module:Class", as in 0.2
SUMMARY = {entry.name: entry.summary for entry in JUDGES.built_in}


def available_judges() -> dict[str, str]:
    """Name -> where it comes from ("built in", or the distribution that provides it)."""
    return JUDGES.available()


def judge_class(name: str) -> JudgePlugin:
    try:
        return JUDGES.load(name)
    except UnknownPluginError as error:
        raise JudgeError(str(error)) from None


def judge_names(spec) -> list[str]:
    """``"score5,correctness"`` (or several such strings) -> the names, in order, each once; unknown names refused,
    and so is a name left empty (``","``, ``"score5,"``, a blank string among several): it would run fewer judges
    than were asked for. A blank string alone names no judge."""
    try:
        return JUDGES.names(spec)
    except UnknownPluginError as error:
        raise JudgeError(str(error)) from None


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
