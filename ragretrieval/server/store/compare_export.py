"""A comparison as a file: ``GET /api/v1/compare/export?ids=A,B[,C]&format=csv|json``, one row per paired question
and tested metric: the question's id and number, the level and metric, each evaluation's value, B - A (and C - A),
and each evaluation's failure class. Text cells are neutralised as the evaluation export's are (a leading ``'``
before ``=``, ``+``, ``-``, ``@``, a tab or a carriage return), numbers are written as numbers."""

from __future__ import annotations

import csv
import io
import json
import math

from ...data.importers.aperag import BOM, neutralise
from ..db import Database
from .comparing import Settings, computed

FORMATS = {"csv": "text/csv; charset=utf-8", "json": "application/json"}
LETTERS = "ABC"


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def compare_rows(db: Database, ids: list[str], how: Settings) -> tuple[list[str], list[dict]]:
    """(the evaluations' names, one dict per question and metric)."""
    rows, all_values, common, _, stats = computed(db, ids, how)
    numbers = {qid: i + 1 for i, qid in enumerate(all_values[0]["ids"])}
    indexes = [{qid: i for i, qid in enumerate(v["ids"])} for v in all_values]
    found = []
    for q, qid in enumerate(common):
        classes = [v.get("classes", [None] * len(v["ids"]))[index[qid]] for v, index in zip(all_values, indexes)]
        for (level, metric), column in stats["columns"].items():
            values = [_number(v) for v in column[:, q]]
            row = {"question_id": qid, "question_number": numbers[qid], "level": level, "metric": metric}
            row |= {LETTERS[i]: value for i, value in enumerate(values)}
            row |= {f"{LETTERS[i]}-A": None if value is None or values[0] is None else value - values[0]
                    for i, value in enumerate(values) if i}
            row |= {f"class_{LETTERS[i]}": name for i, name in enumerate(classes)}
            found.append(row)
    return [row.name for row in rows], found


def render(db: Database, ids: list[str], how: Settings, fmt: str) -> bytes:
    names, found = compare_rows(db, ids, how)
    if fmt == "json":
        evaluations = [{"letter": LETTERS[i], "id": eid, "name": name} for i, (eid, name) in enumerate(zip(ids, names))]
        return json.dumps({"evaluations": evaluations, "rows": found}, ensure_ascii=False).encode()
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    letters = LETTERS[:len(ids)]
    header = ["question_id", "question_number", "level", "metric", *letters, *(f"{x}-A" for x in letters[1:]),
              *(f"class_{x}" for x in letters)]
    writer.writerow(header)
    for row in found:
        writer.writerow(["" if row.get(name) is None else row[name] if isinstance(row[name], (int, float))
                         else neutralise(str(row[name])) for name in header])
    return (BOM + out.getvalue()).encode()
