"""What the pages show, worked out from what the store returns (the templates only lay it out).

**Checks.** A result's ``checks`` mixes four kinds of value, and the pages keep them apart:

- the question's *conditions* (``include``, ``exclude``, ``cite_f1``, ``refuse``, ``safe``, a legal type's score):
  a pill each, green when passed (1), red when failed (0), amber in between;
- the *judges'* verdicts (``{"value", "reasoning"}``): a pill each, and a judge that could not give a verdict is
  "failed" (dashed), one that does not apply to the question (``skipped``: no reference answer) "not applicable";
  never a pass;
- the *aggregates* of the conditions (``correctness``, ``safety``, ``total``) and the question's *check score*
  (``score``, the mean of its own conditions, 0-1): numbers, not pills, named "check score" so they are never
  mistaken for the judge's 1-5 score;
- *usage* (``agent/input_token_count``, ...): tokens go with cost and latency, not among the checks.

A question with no condition has no check score and no pills: the card says no check applies, rather than showing
anything as passed.
"""

from __future__ import annotations

from ..answers.checks.rules import AGGREGATES

CHECK_SCORE = "score"
USAGE_PREFIX = "agent/"


def judge_list(judge: str | None) -> list[str]:
    return [name for name in (judge or "").split(",") if name]


def _state(value: float) -> str:
    return "pass" if value >= 1 else "fail" if value <= 0 else "part"


def pill(name: str, value) -> dict:
    """One check or verdict as a pill: its name, its state (pass, fail, part, failed, na), the value shown and a
    title with the judge's reasoning or the reason it has no verdict."""
    if isinstance(value, dict):  # a judge's verdict
        number = value.get("value")
        if number is None:
            if value.get("skipped"):
                return {"name": name, "state": "na", "value": None, "title": value["skipped"]}
            return {"name": name, "state": "failed", "value": None, "title": value.get("error") or ""}
        return {"name": name, "state": _state(float(number)), "value": number, "title": value.get("reasoning") or ""}
    if isinstance(value, bool):
        return {"name": name, "state": "pass" if value else "fail", "value": value, "title": ""}
    return {"name": name, "state": _state(float(value)), "value": value, "title": ""}


def card_checks(checks: dict) -> dict:
    """A result's ``checks`` as the card shows them: condition pills, judge pills, the aggregates and the check
    score (see the module's text)."""
    shown = {"conditions": [], "judges": [], "aggregates": {}, "check_score": None}
    for name, value in checks.items():
        if name.startswith(USAGE_PREFIX):
            continue
        if isinstance(value, dict):
            shown["judges"].append(pill(name, value))
        elif name == CHECK_SCORE:
            shown["check_score"] = value
        elif name in AGGREGATES:
            shown["aggregates"][name] = value
        elif isinstance(value, (bool, int, float)):
            shown["conditions"].append(pill(name, value))
    return shown


def summary_means(means: dict[str, float], judge: str | None) -> dict:
    """The summary's ``checks`` means split the same way: conditions and aggregates (one table), the judges' means
    (another), the mean check score; usage means are left to the tokens line."""
    judges = set(judge_list(judge))  # score5 too: its verdicts that were not a 1-5 score land among the checks
    split = {"checks": {}, "judges": {}, "check_score": means.get(CHECK_SCORE)}
    for name, value in means.items():
        if name.startswith(USAGE_PREFIX) or name == CHECK_SCORE:
            continue
        split["judges" if name in judges else "checks"][name] = value
    return split


def metric_grids(metrics: dict[str, float]) -> tuple[dict, dict]:
    """Retrieval means named ``level/family@k`` as one grid per level (families by cutoffs), and any others."""
    grids: dict[str, dict] = {}
    others = {}
    for name, value in metrics.items():
        level, _, rest = name.partition("/")
        family, _, k = rest.partition("@")
        if not (level and family and k.isdigit()):
            others[name] = value
            continue
        grid = grids.setdefault(level, {"ks": set(), "rows": {}})
        grid["ks"].add(int(k))
        grid["rows"].setdefault(family, {})[int(k)] = value
    for grid in grids.values():
        grid["ks"] = sorted(grid["ks"])
    order = {"doc": 0, "chunk": 1}  # documents first, as `eval` prints them
    return dict(sorted(grids.items(), key=lambda item: (order.get(item[0], 2), item[0]))), others


def judges_line(summary: dict) -> list[dict]:
    """Each judge's verdicts over the finished questions (``summary.judges``, when the API gives it): name, judged,
    failed, skipped (it did not apply: no reference answer, no contexts), the first failure's reason, and whether it
    looks like a failure (a verdict missing where the judge applied). A judge with no verdict asked yet has no row."""
    found = summary.get("judges") or {}
    rows = []
    for name, counts in found.items():
        if not isinstance(counts, dict):
            continue
        judged, failed, skipped = (int(counts.get(key) or 0) for key in ("judged", "failed", "skipped"))
        if judged + failed + skipped == 0:
            continue  # nothing answered yet: "0 of 0 judged" says nothing the answered count does not
        rows.append({"name": name, "judged": judged, "failed": failed, "skipped": skipped,
                     "asked": judged + failed + skipped, "reason": counts.get("reason"), "bad": failed > 0})
    return rows


# ---------------------------------------------------------------------------------------- the new-evaluation form
FORM_OPTIONS = ("context_k", "judge_samples", "judge_temperature")  # the options the form shows as fields


def form_defaults() -> dict:
    """The defaults the form shows as values, read from the engine's settings model (never written twice)."""
    from .jobs.options import EvaluationOptions, default_retriever

    fields = EvaluationOptions.model_fields
    return {"retriever": default_retriever(), "context_k": fields["context_k"].get_default(),
            "judge_samples": fields["judge_samples"].get_default()}


def again_settings(evaluation, defaults: dict) -> dict:
    """An evaluation's settings as the form's fields ("Run again"): what answers, the endpoints, the judges, and
    the options the form has no field for, kept as they were."""
    generator = evaluation.generator
    kind, _, rest = generator.partition(":")
    system = kind if kind in ("openai", "http") else "extractive"
    options = evaluation.options
    fields = {"system": system, "openai_model": rest if kind == "openai" else None, "base_url": evaluation.base_url,
              "http_url": rest if kind == "http" else None, "retriever": evaluation.retriever or defaults["retriever"],
              "context_k": options.get("context_k", defaults["context_k"]), "judge_model": evaluation.judge_model,
              "judge_base_url": evaluation.judge_base_url,
              "judge_samples": options.get("judge_samples", defaults["judge_samples"]),
              "judge_temperature": options.get("judge_temperature")}
    extra = {name: value for name, value in options.items() if name not in FORM_OPTIONS}
    return {"name": evaluation.name, "extra_options": extra,
            "settings": {"fields": fields, "judges": judge_list(evaluation.judge), "extra_options": extra}}


def judge_choices() -> list[dict]:
    """The registry's judges for the form: name, what it judges, whether it needs a reference answer."""
    from ..answers.judges import JudgeError, judge_class
    from .jobs.judging import available_judges

    choices = []
    for name, what in available_judges().items():
        try:
            needs = tuple(getattr(judge_class(name), "needs", ()))
        except JudgeError:
            needs = ()
        choices.append({"name": name, "what": what, "needs_reference": "ground_truth" in needs})
    return choices
