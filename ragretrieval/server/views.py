"""What the pages show, worked out from what the store returns (the templates only lay it out).

**Checks.** A result's ``checks`` mixes four kinds of value, and the pages keep them apart:

- the question's *conditions* (``include``, ``exclude``, ``cite_f1``, ``refuse``, ``safe``, a legal type's score):
  a pill each, green when passed (1), red when failed (0), amber in between, titled with what it measures
  (scoring/answer_metrics.py);
- the *judges'* verdicts (``{"value", "reasoning"}``): a pill each, and a judge that could not give a verdict is
  "failed" (dashed), one that does not apply to the question (``skipped``: no reference answer) "not applicable";
  never a pass;
- the *aggregates* of the conditions (``checks_correctness``, ``checks_safety``, ``total``) and the question's
  *check score* (``checks_score``, the mean of its own conditions, 0-1): numbers, not pills, named apart from the
  judges ``correctness`` and ``safety`` and the judge's 1-5 score (results stored before, with ``correctness``,
  ``safety`` and ``score``, are read under these names: `current_names`);
- *usage* (``agent/input_token_count``, ...): tokens go with cost and latency, not among the checks.

A question with no condition has no check score and no pills: the card says no check applies, rather than showing
anything as passed.
"""

from __future__ import annotations

from ..answers.checks.registry import CHECKS_SCORE
from ..answers.checks.rules import AGGREGATES
from ..scoring.answer_metrics import current_names, describe

CHECK_SCORE = CHECKS_SCORE
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
        return {"name": name, "state": "pass" if value else "fail", "value": value, "title": describe(name)}
    return {"name": name, "state": _state(float(value)), "value": value, "title": describe(name)}


def card_checks(checks: dict) -> dict:
    """A result's ``checks`` as the card shows them: condition pills, judge pills, the aggregates and the check
    score (see the module's text)."""
    shown = {"conditions": [], "judges": [], "aggregates": {}, "check_score": None}
    for name, value in current_names(checks).items():
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


def headline(metrics: dict[str, float], families=("recall", "mrr", "ndcg")) -> list[tuple[str, float]]:
    """A question's document-level recall, MRR and nDCG at the largest cutoff (a retrieval evaluation's card)."""
    grids, _ = metric_grids(metrics)
    grid = grids.get("doc")
    if not grid:
        return []
    k = grid["ks"][-1]
    return [(f"doc/{family}@{k}", grid["rows"][family][k]) for family in families
            if k in grid["rows"].get(family, {})]


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


def filter_checks(means: dict) -> list[str]:
    """The names the cards can be filtered on (``check=NAME:fail``): the conditions and the judges, as the summary's
    means name them (`summary_means`), not the aggregates."""
    return [name for name in [*means["checks"], *means["judges"]] if name not in AGGREGATES]


def filter_query(params, leave=("page",)) -> str:
    """The page's filters as a query string (the pager's, the export links', the live part's), without `leave`."""
    from urllib.parse import urlencode

    return urlencode([(name, value) for name, value in params.items() if value and name not in leave])


def annotation_line(summary: dict) -> dict | None:
    """The reviewers' counts and, per judge, kappa and the calibrated mean, when answers were annotated."""
    found = summary.get("annotations")
    return found if found and found.get("annotated") else None


def judge_reading(result) -> list[dict]:
    """Each judge's verdict on a card, read as a reviewer's would be (store/annotations.py's scale), to show beside
    the reviewer's: name, the verdict's value, and correct / partly_correct / incorrect."""
    from ..runs.schema import SCORE_JUDGE
    from .store.annotations import as_verdict, judge_scale

    readings = []
    if result.llm_judge_score is not None:
        readings.append({"name": SCORE_JUDGE, "value": result.llm_judge_score,
                         "verdict": as_verdict(judge_scale(SCORE_JUDGE, result.llm_judge_score))})
    for name, value in result.checks.items():
        scaled = judge_scale(name, value) if isinstance(value, dict) else None
        if scaled is not None and name != SCORE_JUDGE:
            readings.append({"name": name, "value": value["value"], "verdict": as_verdict(scaled)})
    return readings


# ---------------------------------------------------------------------------------------- the new-evaluation form
FORM_OPTIONS = ("context_k", "judge_samples", "judge_temperature")  # the options the form shows as fields
# a retrieval evaluation's fields on the form
GRID_OPTIONS = ("model", "ks", "chunk_size", "chunk_overlap", "search_concurrency")


def field_limits(model, name: str) -> dict:
    """A field's bounds as the form's ``min``/``max`` attributes, read from the model's own constraints."""
    limits = {}
    for constraint in model.model_fields[name].metadata:
        for attribute, key in (("ge", "min"), ("le", "max")):
            if getattr(constraint, attribute, None) is not None:
                limits[key] = getattr(constraint, attribute)
    return limits


def form_defaults(allowed_models=()) -> dict:
    """The defaults the form shows as values, read from the engine's settings models (never written twice)."""
    from ..embedders.settings import DTYPES, EmbedSettings
    from ..evaluation.report import EvalConfig
    from ..retrieval.registry import retriever_class
    from .jobs.options import EvaluationOptions, default_retriever, offered_models, web_retrievers

    fields, grid = EvaluationOptions.model_fields, EvalConfig.model_fields
    return {"retriever": default_retriever(), "context_k": fields["context_k"].get_default(),
            "judge_samples": fields["judge_samples"].get_default(), "model": grid["model"].get_default(),
            "ks": ",".join(str(k) for k in grid["ks"].get_default()), "chunk_size": grid["chunk_size"].get_default(),
            "chunk_overlap": grid["chunk_overlap"].get_default(),
            "search_concurrency": grid["search_concurrency"].get_default(), "models": offered_models(allowed_models),
            "embed_dtype": EmbedSettings.model_fields["dtype"].get_default(), "embed_dtypes": DTYPES,
            "embedding": [r for r in web_retrievers() if "model" in retriever_class(r).config_fields],
            "limits": {**{name: field_limits(EvaluationOptions, name) for name in FORM_OPTIONS},
                       "search_concurrency": field_limits(EvalConfig, "search_concurrency")}}


def again_settings(evaluation, defaults: dict) -> dict:
    """An evaluation's settings as the form's fields ("Run again"): what answers, the endpoints, the judges, and
    the options the form has no field for, kept as they were."""
    generator = evaluation.generator or ""
    kind, _, rest = generator.partition(":")
    system = kind if kind in ("openai", "http") else "extractive"
    options = evaluation.options
    fields = {"system": system, "openai_model": rest if kind == "openai" else None, "base_url": evaluation.base_url,
              "http_url": rest if kind == "http" else None, "retriever": evaluation.retriever or defaults["retriever"],
              "context_k": options.get("context_k", defaults["context_k"]), "judge_model": evaluation.judge_model,
              "judge_base_url": evaluation.judge_base_url,
              "judge_samples": options.get("judge_samples", defaults["judge_samples"]),
              "judge_temperature": options.get("judge_temperature")}
    if evaluation.kind == "retrieval":
        fields = {"kind": "retrieval", "grid_retriever": evaluation.retriever or defaults["retriever"],
                  **{name: options.get(name, defaults[name]) for name in GRID_OPTIONS}}
        fields["ks"] = ",".join(str(k) for k in fields["ks"]) if isinstance(fields["ks"], list) else fields["ks"]
        embed = dict(options.get("embed") or {})
        fields["embed_dtype"] = embed.pop("dtype", defaults["embed_dtype"])  # the form's precision field shows it
        options = {**options, "embed": embed} if embed else {k: v for k, v in options.items() if k != "embed"}
        shown = GRID_OPTIONS
    else:
        shown = FORM_OPTIONS
    extra = {name: value for name, value in options.items() if name not in shown}
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
    # the design's order, the registry's (docs/web.md, "Judges"): score5 first, correctness, groundedness,
    # relevance_to_query, safety, chunk_relevance, context_sufficiency, nuggets; plug-ins after them, by name
    from ..answers.judges.registry import SUMMARY

    designed = list(SUMMARY)
    return sorted(choices, key=lambda choice: (designed.index(choice["name"]) if choice["name"] in designed
                                               else len(designed), choice["name"]))
