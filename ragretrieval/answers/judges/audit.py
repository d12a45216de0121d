"""How far a judge can be trusted on this run (``judge-answers RUN --judge NAME --repeats N``; docs/answers/judge.md,
"Judge noise"): the same verdicts asked again, and asked of variants that should not change them.

- **Repeats**: each question's verdict asked `repeats` times in all. Repeat r asks samples from r x
  ``--judge-samples`` on, so each is a fresh verdict (cached apart: an audit started again asks nothing twice), and
  repeat 0 is the run's own verdict. Flip rate with its interval, and each judge metric's noise variance
  (analysis/noise.py), which `compare` reads back to say which differences the judge's noise could make.
- **Agreement** of the run's verdicts with the matching deterministic rule (judges/trust.py) and with a person's
  labels (``--labels FILE``: ``{"question_id", "value"}`` lines, as ``calibrate`` reads), each as Cohen's kappa for
  yes/no verdicts (Spearman for graded ones) with a bootstrap interval.
- **Position bias**: the contexts shown in another order (a seeded shuffle per question, never the same order; the
  answer's citation numbers follow their documents), for judges that read the contexts together.
- **Verbosity bias**: the same answer followed by neutral sentences (at least as long again as the answer), for
  judges that read the answer.

A bias is the mean change of the verdict under the variant, with its interval, beside the share of verdicts that
changed, to be read against what repeats alone change (the disagreement of two repeats).
"""

from __future__ import annotations

import math
import random
import re

from ...analysis.agreement import cohen_kappa, spearman
from ...analysis.noise import flip_rate, interval, shift, within_variance
from ...work.pool import parallel_map
from ...work.progress import as_progress
from ..report import AnsweredQuestion
from ..settings import GENERATOR_CALLS
from .base import JudgeError, JudgeResult
from .trust import MATCHES, pairs

MAX_REPEATS = 100
PADDING = {"zh": "感谢您的提问。希望以上内容对您有所帮助。如果还有其他问题，欢迎随时继续提问。",
           "en": "Thank you for your question. I hope this helps. Feel free to ask if anything else comes up."}
CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def check_repeats(repeats) -> int:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 2 <= repeats <= MAX_REPEATS:
        raise JudgeError(f"repeats must be a whole number from 2 to {MAX_REPEATS}; got {repeats!r}")
    return repeats


def shuffled(answered: AnsweredQuestion, seed: int) -> AnsweredQuestion | None:
    """The question with its contexts in another order and the answer's citations following them (None: fewer than
    two contexts, nothing to shuffle)."""
    n = len(answered.contexts)
    if n < 2:
        return None
    order = list(range(n))
    random.Random(f"{seed}:{answered.id}").shuffle(order)
    if order == list(range(n)):
        order = order[1:] + order[:1]
    new_place = {old: new for new, old in enumerate(order)}

    def renumber(match) -> str:
        numbers = [int(x) for x in re.findall(r"\d+", match.group(1))]
        return "[" + ", ".join(str(new_place.get(x, x)) for x in numbers) + "]"

    return answered.model_copy(update={"contexts": [answered.contexts[i] for i in order],
                                       "answer": CITATION.sub(renumber, answered.answer)})


def padded(answered: AnsweredQuestion, language: str) -> AnsweredQuestion:
    """The same answer followed by neutral sentences, at least as long again as the answer."""
    filler = PADDING.get(language, PADDING["en"])
    times = max(1, math.ceil(len(answered.answer) / len(filler)))
    return answered.model_copy(update={"answer": answered.answer + "\n\n" + " ".join([filler] * times)})


def _agreement(judged: list[float], other: list[float], statistic: str | None = None) -> dict | None:
    if not judged:
        return None
    binary = set(judged) | set(other) <= {0.0, 1.0}
    measure = cohen_kappa if (statistic or ("cohen_kappa" if binary else "spearman")) == "cohen_kappa" else spearman
    found = measure(judged, other).as_dict()
    return {**found, "ci": interval(lambda a, b: measure(a, b).value, judged, other)}


def _label_pairs(name: str, questions: list[AnsweredQuestion], labels: dict[str, float] | None,
                 source: str) -> list[tuple[float, float]] | None:
    """(the judge's verdict, the person's label) for each labelled question with a verdict; None without labels."""
    if labels is None:
        return None
    known = {q.id for q in questions}
    stray = sorted(set(labels) - known)
    if stray:
        raise JudgeError(f"{source}: question {stray[0]!r} is not in the run (the labels are on another run's "
                         "answers?)")
    return [(float(q.judges[name]["value"]), float(labels[q.id])) for q in questions
            if q.id in labels and q.judges.get(name, {}).get("value") is not None]


def _labels_agreement(pairs: list[tuple[float, float]] | None, source: str) -> dict | None:
    if pairs is None:
        return None
    found = _agreement([a for a, _ in pairs], [b for _, b in pairs])
    return {**found, "source": source} if found else {"source": source, "n": 0}


def _values(results: list[JudgeResult], metric: str) -> list[float]:
    found = [r.metrics.get(metric, r.value) if metric in r.metrics else r.value for r in results]
    return [v for v in found if v is not None]


def audit_judge(judge, questions: list[AnsweredQuestion], repeats: int, labels: dict[str, float] | None = None,
                labels_source: str = "labels", threads: int = GENERATOR_CALLS.concurrency, progress=None, stop=None,
                seed: int = 0) -> dict:
    """The audit of one judge on a judged run's `questions` (each holding the judge's verdict, repeat 0)."""
    if not hasattr(judge, "repeated"):
        raise JudgeError(f"judge {judge.name!r} cannot be repeated: it does not ask a model through LLMJudge")
    repeats = check_repeats(repeats)
    name, samples = judge.name, judge.context.options.samples
    base = [q for q in questions if q.error is None and judge.not_applicable(q) is None and name in q.judges]
    reads = set(judge.placeholders)
    tasks = [(q, r, judge.repeated(r * samples)) for q in base for r in range(1, repeats)]
    if "contexts" in reads:
        tasks += [(variant, "position", judge) for q in base if (variant := shuffled(q, seed)) is not None]
    if "answer" in reads:
        tasks += [(padded(q, judge.context.options.language), "verbosity", judge) for q in base]
    progress = as_progress(progress)
    progress.stage(f"auditing judge {name}", total=len(tasks), unit="verdict")
    asked: dict[tuple[str, object], JudgeResult] = {}
    for _, (qid, kind, result) in parallel_map(lambda t: (t[0].id, t[1], t[2].judge(t[0])), tasks, threads,
                                               stop=stop, name="ragretrieval-audit"):
        asked[(qid, kind)] = result
        progress.advance(1)
    spent = list(asked.values())
    # what was asked, gathered first; the statistics (analysis/) are taken of it after
    first = {q.id: JudgeResult.model_validate(q.judges[name]) for q in base}
    runs = {q.id: [first[q.id]] + [asked[(q.id, r)] for r in range(1, repeats)] for q in base}
    metrics = [judge.metric, *dict.fromkeys(m for rs in runs.values() for r in rs for m in r.metrics)]
    by_metric = {m: [_values(rs, m) for rs in runs.values()] for m in metrics}
    verdicts = [[r.value for r in rs if r.value is not None] for rs in runs.values()]
    failed = sum(r.value is None and r.skipped is None for rs in runs.values() for r in rs)
    match = MATCHES.get(name)
    rule = pairs(name, match, questions) if match is not None else []
    labelled = _label_pairs(name, questions, labels, labels_source)
    variants = {kind: [(first[q.id].value, asked[(q.id, kind)].value) for q in base if (q.id, kind) in asked
                       and first[q.id].value is not None and asked[(q.id, kind)].value is not None]
                for kind in ("position", "verbosity")}
    found = {"settings": judge.settings(), "metric": judge.metric, "repeats": repeats, "seed": seed,
             "failed": failed, **flip_rate(verdicts, seed=seed), "requests": sum(r.requests for r in spent),
             "input_tokens": sum(r.input_tokens for r in spent), "output_tokens": sum(r.output_tokens for r in spent),
             "cost": round(sum(r.cost for r in spent), 6),
             "variance": {m: v for m, values in by_metric.items() if (v := within_variance(values)) is not None},
             "rule": ({"check": match.check, **_agreement([a for a, _ in rule], [b for _, b in rule],
                                                          match.statistic)} if match is not None and rule else None),
             "labels": _labels_agreement(labelled, labels_source)}
    for kind, applies, why in (("position", "contexts" in reads, "the judge does not read the contexts together"),
                               ("verbosity", "answer" in reads, "the judge does not read the answer")):
        both = variants[kind]
        found[kind] = shift([a for a, _ in both], [b for _, b in both], seed) if applies else {"not_applicable": why}
    return found
