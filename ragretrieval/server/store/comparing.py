"""Evaluations side by side: ``compare``'s statistics on their stored runs, then their results
question by question.

The statistics are `analysis.compare.compare` on the evaluations' stored runs (the runs ``ragretrieval compare``
reads), one comparison per level: ``answer`` (every check, the judges' metrics and the average judge score, when
every evaluation is an answer evaluation), then ``doc`` and ``chunk`` (every retrieval metric all the runs hold).
Each level is one family for the multiple-testing correction, as ``ragretrieval compare --granularity LEVEL -m ...``
with the same metrics makes it, so each level's JSON is that command's ``--json`` (the tests compare the two).

Pairing. Questions are paired by the id their stored run knows them by (a dataset's question keeps the dataset's
id, so two evaluations of a corpus's questions pair even when they were opened as different sets). Where the command
line refuses runs over different question sets, the page compares the questions all the evaluations have and says
how many each one has that the others lack (with a few of their ids); with no question in common it refuses.

Speed. A run's per-question values are read from its columns (runs/columns.py: stored with the run, apart from its
report, so the first view parses no report) and kept (by run id, configuration key and means: ``judge-answers``
updating a run makes it another entry); a comparison is kept under the same keys and its settings, since stored
runs do not change. The statistics of ~130 metrics of 1,000 questions take a few tens of milliseconds the first time
(analysis/paired_batch.py), nothing after.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
from sqlalchemy import select

from ...analysis.compare import (
    ANSWER_LEVEL,
    ComparedRun,
    CompareError,
    compare,
    unique_labels,
)
from ...analysis.settings import PAIRED, CompareSettings
from ...analysis.stats import TIE_TOLERANCE
from ...runs.columns import LEVELS, RunColumns
from ...runs.schema import evaluation_results, evaluations, runs
from ...work.options import SettingsError
from ..db import Database
from ..jobs.records import record_ids
from ..schemas import PAGE_SIZE
from . import Conflict, Invalid, NotFound
from .evaluations import DONE, SHOWN, evaluation_out, rel_level_of, result_out
from .triage import Triage, chosen, differences, metric_key, shown_name, transition_counts

E, R = evaluations.c, evaluation_results.c
MIN_COMPARED, MAX_COMPARED = 2, 3  # A,B[,C]: a page stays readable side by side
SHOWN_IDS = 5
MAX_RESAMPLES = 100_000


Settings = CompareSettings  # the statistics' settings, as ``compare`` takes them


def settings(test: str = PAIRED.test, correction: str = PAIRED.correction, alpha: float = PAIRED.alpha,
             n_resamples: int = PAIRED.n_resamples, seed: int = PAIRED.seed) -> CompareSettings:
    """`CompareSettings` of the page's or the API's query; the web reads at most `MAX_RESAMPLES` resamples (a
    request is answered while someone waits)."""
    if not 1 <= n_resamples <= MAX_RESAMPLES:
        raise Invalid(f"n_resamples must be from 1 to {MAX_RESAMPLES}; got {n_resamples}")
    try:
        return CompareSettings(test=test, correction=correction, alpha=alpha, n_resamples=n_resamples, seed=seed)
    except SettingsError as error:
        raise Invalid(str(error)) from None


def parse_ids(text: str) -> list[str]:
    """``A,B[,C]``: 2 or 3 different evaluations."""
    ids = [part.strip() for part in (text or "").split(",") if part.strip()]
    if not MIN_COMPARED <= len(ids) <= MAX_COMPARED:
        raise Invalid(f"ids: compare takes {MIN_COMPARED} or {MAX_COMPARED} evaluations separated by commas; got "
                      f"{len(ids)}")
    twice = next((i for i in ids if ids.count(i) > 1), None)
    if twice is not None:
        raise Invalid(f"ids: evaluation {twice[:40]!r} is named twice; an evaluation compared with itself differs "
                      "nowhere")
    return ids


class _Kept:
    """A small thread-safe LRU."""

    def __init__(self, size: int):
        self.size, self.found, self.lock = size, OrderedDict(), threading.Lock()

    def get(self, key, make):
        with self.lock:
            if key in self.found:
                self.found.move_to_end(key)
                return self.found[key]
        value = make()
        with self.lock:
            self.found[key] = value
            while len(self.found) > self.size:
                self.found.popitem(last=False)
        return value


_values, _comparisons = _Kept(16), _Kept(16)


def _run_values(columns: RunColumns) -> dict:
    """What `compare` needs of a run: its question ids, failure classes and each level's per-question values (NaN
    where a question lacks a metric)."""
    return {"ids": columns.ids, "kind": columns.kind, "levels": columns.levels, "classes": columns.classes}


def _loaded(db: Database, evaluation) -> tuple[tuple, dict]:
    """(the run's key, its values): the stored run of a COMPLETED evaluation."""
    if evaluation.status != "COMPLETED" or not evaluation.run_id:
        why = "it is " + evaluation.status if evaluation.status != "COMPLETED" else "its run could not be stored"
        raise Conflict(f"evaluation {evaluation.name!r} has no stored run to compare ({why}); compare completed "
                       "evaluations")
    with db.read() as conn:
        row = conn.execute(select(runs.c.config_key, runs.c.means).where(runs.c.id == evaluation.run_id)).first()
    if row is None:
        raise Conflict(f"evaluation {evaluation.name!r}: its stored run {evaluation.run_id} was removed from the runs "
                       "history (ragretrieval runs rm)")
    key = (evaluation.run_id, row.config_key, hashlib.sha256(row.means.encode()).hexdigest())
    return key, _values.get(key, lambda: _run_values(db.history.columns(evaluation.run_id)))


def _restricted(label: str, values: dict, common: list[str]) -> ComparedRun:
    index = {qid: i for i, qid in enumerate(values["ids"])}
    rows = np.array([index[qid] for qid in common], dtype=np.int64)

    def per_question(metric: str, level: str) -> np.ndarray:
        return values["levels"][level][metric][rows]

    return ComparedRun(label, "web", list(common), per_question, SimpleNamespace(kind=values["kind"]))


def _level_metrics(all_values: list[dict], level: str) -> list[str]:
    """The metrics of `level` that every run holds, in the first run's order."""
    if level == ANSWER_LEVEL and any(v["kind"] != "answer" for v in all_values):
        return []
    names = [set(v["levels"].get(level, {})) for v in all_values]
    return [name for name in all_values[0]["levels"].get(level, {}) if all(name in n for n in names)]


def _pairable(runs_: list[ComparedRun], metric: str, level: str) -> bool:
    """Whether every run after the first shares a question with a value of `metric` with the first."""
    base = np.isfinite(runs_[0].per_question(metric, level))
    return all((base & np.isfinite(run.per_question(metric, level))).any() for run in runs_[1:])


def _statistics(labels: list[str], all_values: list[dict], common: list[str], how: Settings) -> dict:
    compared = [_restricted(label, values, common) for label, values in zip(labels, all_values)]
    unique_labels(compared)
    levels, changed, notes, columns = {}, np.zeros(len(common), dtype=bool), [], {}
    for level in LEVELS:
        metrics = [m for m in _level_metrics(all_values, level) if _pairable(compared, m, level)]
        if not metrics:
            continue
        try:
            levels[level] = compare(compared, metrics, how.test, how.correction, how.alpha, level, how.n_resamples,
                                    how.seed).to_json()
        except CompareError as error:
            notes.append(f"{level}: {error}")
            continue
        for metric in metrics:
            columns[(level, metric)] = np.stack([run.per_question(metric, level) for run in compared])
            base = compared[0].per_question(metric, level)
            for other in compared[1:]:
                values = other.per_question(metric, level)
                present = np.isfinite(base) & np.isfinite(values)
                changed |= (np.isfinite(base) != np.isfinite(values)) | (
                    present & (np.abs(np.where(present, values - base, 0.0)) > TIE_TOLERANCE))
    return {"labels": [run.label for run in compared], "levels": levels, "changed": changed, "notes": notes,
            "columns": columns, "transitions": transitions(all_values, common)}


def transitions(all_values: list[dict], common: list[str]) -> list[str | None]:
    """Each paired question's failure classes, A -> B [-> C] (None when a run predates failure classes)."""
    found = []
    indexes = [{qid: i for i, qid in enumerate(v["ids"])} for v in all_values]
    classes = [v.get("classes") or [None] * len(v["ids"]) for v in all_values]
    for qid in common:
        each = [of[index[qid]] for of, index in zip(classes, indexes)]
        found.append(None if None in each else " -> ".join(each))
    return found


def compare_evaluations(db: Database, ids: list[str], how: Settings, changed_only: bool = False, offset: int = 0,
                        limit: int = PAGE_SIZE, triage: Triage | None = None) -> dict:
    """The comparison of the evaluations `ids` (the first is the baseline): statistics per level, pairing, and a
    page of the paired questions (filtered and ordered as `triage` asks; ``changed_only`` is ``filter=changed``)."""
    triage = triage or Triage()
    if changed_only and triage.filter == "all":
        triage = replace(triage, filter="changed")
    rows, all_values, common, unpaired, stats = computed(db, ids, how)
    picked = chosen(stats, triage)
    page = [common[i] for i in picked[offset:offset + limit]]
    key = metric_key(stats["columns"], triage.metric)
    numbers = {qid: i + 1 for i, qid in enumerate(all_values[0]["ids"])}
    items = _questions(db, rows, [v["ids"] for v in all_values], page, set(page) & _changed_ids(common,
                                                                                                stats["changed"]))
    where = {qid: i for i, qid in enumerate(common)}
    indexes = [where[item["id"]] for item in items]
    for item, i, moved in zip(items, indexes, differences(stats, indexes)):
        item |= {"number": numbers[item["id"]], "differences": moved, "transition": stats["transitions"][i]}
    return {
        "evaluations": [evaluation_out(row).model_dump(include={"id", "name", "kind", "status", "run_id",
                                                                  "question_set_id", "dataset"}) for row in rows],
        "labels": stats["labels"], "paired": len(common), "unpaired": unpaired, "notes": stats["notes"],
        "changed": int(stats["changed"].sum()), "levels": stats["levels"],
        "triage": {"filter": triage.filter, "order": triage.order, "metric": shown_name(key) if key else None,
                   "metrics": [shown_name(k) for k in stats["columns"]], "transition": triage.transition or None,
                   "transitions": transition_counts(stats)},
        "questions": {"items": items, "total": len(picked), "offset": offset, "limit": limit},
        "settings": how.model_dump(),
    }


def computed(db: Database, ids: list[str], how: Settings):
    """(rows, each run's values, the paired ids, what is unpaired, the kept statistics) of a comparison."""
    with db.read() as conn:
        found = {row.id: row for row in conn.execute(select(evaluations).where(E.id.in_(ids)))}
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"no evaluation {missing[0][:40]!r}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1
                                                                else ""))
    rows = [found[i] for i in ids]
    loaded = [_loaded(db, row) for row in rows]
    all_values = [values for _, values in loaded]
    present = [set(v["ids"]) for v in all_values]
    common = [qid for qid in all_values[0]["ids"] if all(qid in p for p in present[1:])]
    everywhere = set(common)
    unpaired = []
    for row, values in zip(rows, all_values):
        alone = [qid for qid in values["ids"] if qid not in everywhere]
        unpaired.append({"id": row.id, "name": row.name, "count": len(alone), "examples": alone[:SHOWN_IDS]})
    if not common:
        raise Invalid("these evaluations have no question in common, so nothing can be paired: "
                      + "; ".join(f"{row.name!r} has {len(v['ids'])}" for row, v in zip(rows, all_values))
                      + " (questions pair by their dataset id, or by their question set's id)")
    key = (tuple(k for k, _ in loaded), json.dumps(how.model_dump(), sort_keys=True))
    labels = [row.name for row in rows]
    stats = _comparisons.get(key, lambda: _statistics(labels, all_values, common, how))
    return rows, all_values, common, unpaired, stats


def _changed_ids(common: list[str], changed: np.ndarray) -> set[str]:
    return {qid for qid, moved in zip(common, changed) if moved}


def result_ids(conn, evaluation_id: str, run_ids: list[str], shown: set[str]) -> dict[str, str]:
    """The shown questions' ids in the stored run -> their result rows' question ids. The run holds the evaluation's
    results in position order (jobs/stored_run.py), positions counting from 0, so the shown rows are read by
    position and each is checked to be the question the run names (by its own id, or by its record's); if one is not
    (a run made otherwise), every row's record is read (`record_ids`), as before."""
    where = {qid: i for i, qid in enumerate(run_ids) if qid in shown}
    found = {r.position: r for r in conn.execute(select(R.position, R.question_id, R.source_record).where(
        R.evaluation_id == evaluation_id, R.position.in_(list(where.values()))))}
    by_position = {}
    for qid, position in where.items():
        r = found.get(position)
        if r is None or (r.question_id != qid and (json.loads(r.source_record) if r.source_record else {}).get(
                "id") != qid):
            break
        by_position[qid] = r.question_id
    else:
        return by_position
    keys = conn.execute(select(R.question_id, R.source_record).where(R.evaluation_id == evaluation_id)).all()
    ids = record_ids([(k.question_id, json.loads(k.source_record) if k.source_record else None) for k in keys])
    return {run_id: qid for qid, run_id in ids.items() if run_id in shown}


def _questions(db: Database, rows, run_ids: list[list[str]], page: list[str], moved: set[str]) -> list[dict]:
    """The page's paired questions: each evaluation's result for it (None when it has none stored)."""
    items = [{"id": qid, "changed": qid in moved, "question_text": None, "ground_truth": None, "results": []}
             for qid in page]
    if not page:
        return items
    shown_ids = set(page)
    with db.read() as conn:
        for row, ids in zip(rows, run_ids):
            wanted = result_ids(conn, row.id, ids, shown_ids)
            results = {r.question_id: r for r in conn.execute(select(*SHOWN).where(
                R.evaluation_id == row.id, R.state == DONE, R.question_id.in_(list(wanted.values()))))}
            level = rel_level_of(row)
            for item in items:
                result = results.get(wanted.get(item["id"]))
                shown = result_out(result, level) if result is not None else None
                if shown is not None and item["question_text"] is None:
                    item["question_text"], item["ground_truth"] = shown.question_text, shown.ground_truth
                item["results"].append(shown.model_dump(mode="json") if shown else None)
    return items
