"""`judge_answers`: ``ragretrieval judge answers`` from Python (docs/python.md): judge the stored answers of an answer
run and keep the verdicts with it, nothing generated again."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..answers.judges.audit import check_repeats
from ..answers.judges.base import JudgeError
from ..answers.report import ANSWER_REPORT, AnswerReport, load_report
from ..answers.settings import AnswerSettings
from ..errors import InputError
from ..work.options import SettingsError, build_settings
from .inputs import values, with_settings_signature

# the settings a judging takes: the judges' own, how many questions at once, and the spending limit
JUDGING_FIELDS = tuple(name for name in AnswerSettings.model_fields
                       if name.startswith("judge") or name in ("threads", "max_cost"))


def _run(run, runs_db):
    """(report, the stored run or None): an AnswerReport, a report file, else a run id or name of the history."""
    from ..evaluation.report import EvalReport

    if isinstance(run, (AnswerReport, EvalReport)):  # a retrieval report is refused by the caller, naming it
        return run, None
    if not isinstance(run, (str, Path)) or not str(run).strip():
        shown = repr(run) if isinstance(run, str) or run is None else type(run).__name__
        raise SettingsError(f"run must be a run id or name, a report file or an AnswerReport; got {shown}", ["run"])
    path = Path(run)
    if path.suffix == ".json" and path.is_file():
        return load_report(path, ANSWER_REPORT), None
    from ..runs import RunHistory

    with RunHistory(runs_db) as history:
        stored = history.get(str(run))
        history.check_writable()  # the verdicts are stored in it: refuse before any is asked for
    return stored.report, stored


def _labels(labels, source: str | None):
    """A person's labels for the audit: {question id: value} (`source` names them in messages), or a file of
    ``{"question_id", "value"}`` lines."""
    if labels is None or isinstance(labels, dict):
        return labels, source or "labels"
    from ..analysis.calibrated_runs import read_values  # SciPy: loaded when judging, not on import

    return read_values(Path(labels)), str(labels)


def judge_answers(run, *, config=None, runs_db=None, save: bool = True, new_run: bool = False, name=None, tags=(),
                  out=None, repeats: int | None = None, labels=None, labels_source: str | None = None, seed: int = 0,
                  dry_run: bool = False, progress=False, stop=None, on_note: Callable[[str], None] | None = None,
                  **settings):
    """Judge the stored answers of an answer run and add the verdicts to it: what ``ragretrieval judge answers``
    does. Returns the judged `AnswerReport` (with ``dry_run=True``: the plan of the requests, nothing asked).

    `run`: a run id or name of the runs history (`runs_db`), an ``answer --out`` report file, or an `AnswerReport`.
    Settings: the judges' fields of `AnswerSettings` as keyword arguments (``judges=["score5"], judge_model=...,
    max_cost=...``). A run of the history is updated in place (``save=False``: left as it is), or with `new_run`
    stored as a new run linked by ``judged_from`` (`name`, `tags`); `out` also writes the judged report.
    ``repeats=N`` audits the judges (their noise, stored with the run; `seed` of its shuffles) against `labels` when
    given. `on_note` gets
    each line worth showing (a missing reference, where the run was stored)."""
    from ..answers.judging import judge_stored_run

    note = on_note or (lambda line: None)
    others = sorted(set(settings) - set(JUDGING_FIELDS))
    if others:
        raise SettingsError(f"{others[0]} is not a judging setting (judging takes: {', '.join(JUDGING_FIELDS)})",
                            [others[0]])
    if (name or tags) and not new_run:
        raise SettingsError("name and tags name a new run: add new_run (a stored run is renamed and tagged with "
                            "`runs rename` and `runs tag`)", ["name", "tags", "new_run"])
    if labels is not None and repeats is None:
        raise SettingsError("labels are read by the audit: give repeats", ["labels", "repeats"])
    if repeats is not None:
        try:
            check_repeats(repeats)
        except JudgeError as error:
            raise SettingsError(str(error), ["repeats"]) from None
    judging = build_settings(AnswerSettings, values(config, AnswerSettings, settings))
    if not judging.judges:
        raise SettingsError("name at least one judge (judges)", ["judges"])
    labels, labels_source = _labels(labels, labels_source)
    report, stored = _run(run, runs_db)
    if not isinstance(report, AnswerReport):
        shown = run if isinstance(run, (str, Path)) else "this report"
        raise InputError(f"{shown} is a retrieval run: judge answers judges the answers of an answer run "
                         "(`ragretrieval answer`); `ragretrieval judge chunks` grades retrieved chunks")
    if stored is None and out is None and not dry_run and not isinstance(run, AnswerReport):
        raise SettingsError(f"out (the judged report's file) is needed: {run} is a report file, which is left as it "
                            "is", ["out"])
    judged = judge_stored_run(report, judging, threads=judging.threads, replace=new_run, repeats=repeats, labels=labels,
                              labels_source=labels_source, seed=seed, dry_run=dry_run, progress=progress, stop=stop)
    for warning in judged.warnings:
        note(f"warning: {warning}")
    if dry_run:
        return judged.plan
    result, journal = judged.report, judged.journal
    assert result is not None and journal is not None  # a judging that is not a dry run has both
    if new_run and stored is not None:
        result = result.model_copy(update={"judged_from": stored.id})
    if out:
        result.save(out)
        note(f"report written to {out}")
    if stored is not None and save:
        _store(result, stored, runs_db, new_run, name, tags, judging.judges, note)
    journal.unlink(missing_ok=True)
    return result


def _store(judged: AnswerReport, stored, runs_db, new_run: bool, name, tags, judges, note) -> None:
    from ..runs import RunHistory

    with RunHistory(runs_db) as history:
        if new_run:
            new_name = name or (f"{stored.name}+judges" if stored.name else None)
            new_id = history.save(judged, name=new_name, tags=[*stored.tags, *tags],
                                  on_note=lambda text: note(f"note: {text}"))
            note(f"run {new_id} saved to {history.display_url} (judged from {stored.id}, which is unchanged)")
        else:
            history.update(stored.id, judged, expected_key=stored.config_key)
            note(f"run {stored.id} updated in {history.display_url}: judges {', '.join(judges)} added")


with_settings_signature(judge_answers, AnswerSettings, only=JUDGING_FIELDS)
