"""``ragretrieval score QRELS RUN``: score a TREC run file against TREC qrels, like trec_eval, in one call.

A thin layer over `score_files` (the run is read in batches of whole queries, never whole) and, with ``--trec-eval``,
over `scoring.trec_eval` (trec_eval's flags and output): every option maps to one argument of those functions, and
every error they raise (bad metric name, malformed line, duplicate judgement, bad option) becomes one ``Error:`` line
(cli/__init__.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..io.atomic import atomic_writer
from ..scoring import parse_metric, score_files
from ..scoring.means import DEFAULT_METRICS, means_table
from ..scoring.trec_eval import evaluate, parse_measures
from .fields import comma_separated
from .progress import no_progress_option, terminal_progress

_OURS = {"rel_level": ("--rel-level", 1), "ties": ("--ties", "score"), "queries": ("--queries", "all"),
         "depth": ("--depth", None), "per_query_path": ("--per-query", None), "as_json": ("--json", False)}
_TREC = {"query_lines": ("-q", False), "complete": ("-c", False), "no_summary": ("-n", False),
         "max_docs": ("-M", None), "level": ("-l", None)}


@click.command("score")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("run", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-m", "--metric", "names", multiple=True, metavar="NAME",
              help=f"A metric such as recall@10, ndcg@10, mrr, map, r_precision (repeatable) "
                   f"[default: {' '.join(DEFAULT_METRICS)}]; with --trec-eval, a trec_eval measure such as P.5,10, "
                   f"ndcg_cut.10, map, official [default: official].")
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
@click.option("--interleaved", type=click.Choice(["group", "refuse"]), default="group", show_default=True,
              help="A run whose queries' lines are not together: group it on disk (temporary files) or refuse it.")
@click.option("--trec-eval", "trec_eval", is_flag=True,
              help="Take trec_eval's flags (-q -c -n -M -l, -m as trec_eval measures) and print its output.")
@click.option("-q", "query_lines", is_flag=True, help="--trec-eval: also print each query's values.")
@click.option("-c", "complete", is_flag=True, help="--trec-eval: average over every qrels query (missing ones 0).")
@click.option("-n", "no_summary", is_flag=True, help="--trec-eval: leave out the summary ('all') lines.")
@click.option("-M", "max_docs", type=int, default=None, help="--trec-eval: keep the first N docs of each ranking.")
@click.option("-l", "level", type=int, default=None, help="--trec-eval: labels >= N are relevant [default: 1].")
@no_progress_option
def score_command(qrels, run, names, rel_level, ties, queries, depth, per_query_path, as_json, interleaved,
                  trec_eval, query_lines, complete, no_summary, max_docs, level, no_progress) -> None:
    """Score RUN (qid Q0 docid rank score tag) against QRELS (qid 0 docid label); gzip files are read as they are."""
    given = locals()
    if trec_eval:
        _only_with(given, _OURS, "cannot be used with --trec-eval")
        lines = evaluate(qrels, run, parse_measures(names), per_query=query_lines, complete=complete,
                         summary=not no_summary, max_docs=max_docs, level=1 if level is None else level,
                         interleaved=interleaved)
        _print_lines(lines)
        return
    _only_with(given, _TREC, "can only be used with --trec-eval")
    # a comma list is repeated -m (trec_eval's own measures, P.5,10, keep their commas above)
    names = list(dict.fromkeys(comma_separated(None, None, names) or DEFAULT_METRICS))  # keys as typed, each once
    metrics = {name: parse_metric(name) for name in names}
    bars = not no_progress and sys.stderr.isatty()  # scripts that read standard error get the note lines only
    result = score_files(qrels, run, list(metrics.values()), rel_level=rel_level, ties=ties, queries=queries,
                         depth=depth, interleaved=interleaved, progress=terminal_progress(not bars))
    means = {name: result.means[metric.name] for name, metric in metrics.items()}
    missing = result.missing_queries
    if missing and queries == "all":
        click.echo(f"note: {len(missing)} qrels quer{'y has' if len(missing) == 1 else 'ies have'} no ranking in "
                   f"the run and count{'s' if len(missing) == 1 else ''} as 0 (--queries both skips them)", err=True)
    if per_query_path:
        write_per_query(per_query_path, result, metrics)
    if as_json:
        click.echo(json.dumps(means))
    else:
        click.echo(means_table(means, len(result.query_ids)))

def _only_with(given: dict, options: dict, rule: str) -> None:
    """Refuse the options that have no meaning in this mode (set to other than their defaults)."""
    used = [flag for name, (flag, default) in options.items() if given[name] != default]
    if used:
        raise click.UsageError(f"{', '.join(used)} {rule}")


def _print_lines(lines, chunk: int = 65536) -> None:
    """Lines to standard output in chunks: a per-query output can run to tens of millions of lines."""
    batch = []
    for line in lines:
        batch.append(line)
        if len(batch) == chunk:
            click.echo("\n".join(batch))
            batch = []
    if batch:
        click.echo("\n".join(batch))



def write_per_query(path: Path, result, metrics: dict) -> None:
    """query, metric, value rows, query by query; values in full precision (repr)."""
    with atomic_writer(path, binary=True) as file:
        file.write(b"query\tmetric\tvalue\n")
        columns = [(name, result.per_query[metric.name].tolist()) for name, metric in metrics.items()]
        for i, query in enumerate(result.query_ids.tolist()):
            file.write("".join(f"{query}\t{name}\t{values[i]!r}\n" for name, values in columns).encode())
