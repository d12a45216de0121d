"""``ragretrieval score QRELS RUN``: score a TREC run file against TREC qrels, like trec_eval, in one call.

A thin layer over `read_qrels`, `read_run` and `score()`: every option maps to one argument of those functions, and
every error they raise (bad metric name, malformed line, duplicate judgement, bad option) becomes one ``Error:`` line
(cli/__init__.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..io.atomic import atomic_writer
from ..scoring import parse_metric, score
from ..scoring.means import DEFAULT_METRICS, means_table
from ..scoring.trec import read_qrels, read_run
from .fields import comma_separated


@click.command("score")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("run", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-m", "--metric", "names", multiple=True, metavar="NAME", callback=comma_separated,
              help=f"A metric such as recall@10, ndcg@10, mrr, map, r_precision (repeatable) "
                   f"[default: {' '.join(DEFAULT_METRICS)}].")
@click.option("--rel-level", type=int, default=1, show_default=True, help="Labels >= this are relevant (trec_eval -l).")
@click.option("--ties", type=click.Choice(["score", "rank"]), default="score", show_default=True,
              help="score: rank by score, ties by doc id descending (trec_eval); rank: keep the file order.")
@click.option("--queries", type=click.Choice(["all", "both"]), default="all", show_default=True,
              help="all: average every qrels query, 0 when missing from the run (trec_eval -c); "
                   "both: only queries in qrels and run (trec_eval's default).")
@click.option("--depth", type=int, default=None, help="Keep the first N docs of each ranking (trec_eval -M).")
@click.option("--per-query", "per_query_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write query, metric, value rows (tab-separated, with a header) to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object {metric: mean} instead of the table.")
def score_command(qrels, run, names, rel_level, ties, queries, depth, per_query_path, as_json) -> None:
    """Score RUN (qid Q0 docid rank score tag) against QRELS (qid 0 docid label)."""
    names = list(dict.fromkeys(names or DEFAULT_METRICS))  # keys as typed, each once
    metrics = {name: parse_metric(name) for name in names}
    judged = read_qrels(qrels)
    result = score(judged, read_run(run, doc_ids=judged.doc_ids), list(metrics.values()), rel_level=rel_level,
                   ties=ties, queries=queries, depth=depth)
    means = {name: result.means[metric.name] for name, metric in metrics.items()}
    missing = getattr(result, "missing_queries", [])
    if missing and queries == "all":
        click.echo(f"note: {len(missing)} qrels quer{'y has' if len(missing) == 1 else 'ies have'} no ranking in "
                   f"the run and count{'s' if len(missing) == 1 else ''} as 0 (--queries both skips them)", err=True)
    if per_query_path:
        write_per_query(per_query_path, result, metrics)
    if as_json:
        click.echo(json.dumps(means))
    else:
        click.echo(means_table(means, len(result.query_ids)))


def write_per_query(path: Path, result, metrics: dict) -> None:
    """query, metric, value rows, query by query; values in full precision (repr)."""
    with atomic_writer(path, binary=True) as file:
        file.write(b"query\tmetric\tvalue\n")
        columns = [(name, result.per_query[metric.name].tolist()) for name, metric in metrics.items()]
        for i, query in enumerate(result.query_ids.tolist()):
            file.write("".join(f"{query}\t{name}\t{values[i]!r}\n" for name, values in columns).encode())
