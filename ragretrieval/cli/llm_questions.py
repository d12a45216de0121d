"""The ``--generator llm`` part of ``build-dataset``: turns its options into settings, runs the LLM builder, reports
what was kept and dropped, and maps every LLM failure to a clear command-line error."""

from __future__ import annotations

import click

from ..llm.questions.build import QuestionOptions
from .cost_options import dry_run_option, max_cost_option
from .llm_options import llm_options, llm_settings
from .progress import no_progress_option, terminal_progress


def question_llm_options(prefix: str):
    """The options of questions written by a model (``dataset build --generator llm``, ``questions generate``):
    how many, which types, the endpoint (`llm_options`), the spend; `prefix` (``"llm: "``) marks them where the model
    is not the command's only source of questions."""
    declared = [
        click.option("--per-doc", type=int, default=QuestionOptions.per_doc, show_default=True,
                     help=f"{prefix}questions asked per document."),
        click.option("--types", "types_text", default="factual,inferential", show_default=True,
                     help=f"{prefix}question types (factual, inferential)."),
        click.option("--max-docs", type=int, default=None,
                     help=f"{prefix}ask about this many documents, spread over the corpus."),
        click.option("--no-retry-failed", is_flag=True,
                     help=f"{prefix}when resuming, keep the failures of documents whose answers failed before "
                          "(default: ask again)."),
        llm_options(prefix, "$n, $types, $title, $document"),
        click.option("--max-cost", type=float, default=None, callback=max_cost_option, metavar="DOLLARS",
                     help=f"{prefix}stop before the spend at --llm-price-in/--llm-price-out would pass DOLLARS; the "
                          "finished documents are kept and the same command continues. 0: only answers already in "
                          "the cache."),
        dry_run_option,
        click.option("-v", "--verbose", is_flag=True, help=f"{prefix}with --dry-run, one line per request."),
        no_progress_option,
    ]

    def apply(command):
        for option in reversed(declared):
            command = option(command)
        return command

    return apply


def _settings(per_doc, types_text, model, base_url, api_key_env, concurrency, max_docs, prompt_file, language,
              price_in, price_out, timeout, max_retries, no_retry_failed, **_):
    from ..llm.questions.build import QuestionOptions, parse_types

    settings = llm_settings(model, base_url, api_key_env, timeout, max_retries, price_in, price_out)
    options = QuestionOptions(per_doc=per_doc, types=parse_types(types_text), concurrency=concurrency,
                              max_docs=max_docs, prompt_file=prompt_file, language=language,
                              retry_failed=not no_retry_failed)
    return settings, options


def plan_llm_questions(documents, out, **llm):
    """What `add_llm_questions` would send (``--dry-run``), with nothing sent."""
    from ..llm.questions.build import plan_llm_questions as plan

    return plan(list(documents), out, *_settings(**llm))


def add_llm_questions(documents, out, questions, *, no_progress, max_cost=None, **llm):
    """`questions` plus the LLM's, and the manifest's record of the LLM run; `max_cost` stops before the spend
    would pass it (exit 3; the finished documents stay in the journal)."""
    from ..llm.budget import Budget, BudgetReached
    from ..llm.questions.build import llm_questions
    from ..llm.questions.generate import exact_key, journal_for
    from ..llm.replies import check_failures
    from .cost_options import stopped_by_budget

    settings, options = _settings(**llm)
    if max_cost is not None and not (settings.price_in or settings.price_out):
        raise click.UsageError("--max-cost needs the model's prices (--llm-price-in, --llm-price-out): without them "
                               "every request costs $0")
    try:
        result, info = llm_questions(list(documents), out, settings, options,
                                     taken={exact_key(q.text) for q in questions},
                                     progress=terminal_progress(no_progress),
                                     budget=Budget(max_cost) if max_cost is not None else None)
    except BudgetReached as error:
        journal = journal_for(out).path
        kept = (f"the documents done are kept in {journal}" if journal.is_file() else
                "no document was finished, so no journal was written")
        raise stopped_by_budget(error, kept) from None
    for failed in result.failed:
        click.echo(f"warning: no questions for {failed['doc_id']}: {failed['reason']}", err=True)
    counts = info["counts"]
    dropped = ", ".join(f"{counts[k]} {k}" for k in sorted(counts)
                        if k not in ("documents", "generated", "kept", "failed documents") and counts[k])
    usage = info["usage"]
    click.echo(f"llm: {counts['documents']} documents, {counts['generated']} questions generated, {counts['kept']} "
               f"kept" + (f" (dropped: {dropped})" if dropped else "") + f"; {usage['requests']} requests, "
               f"{usage['cached']} from cache, {usage['prompt_tokens'] + usage['completion_tokens']} tokens"
               + (f", ${usage['cost']:.4f}" if usage["cost"] else ""), err=True)
    check_failures([f["reason"] for f in result.failed], counts["documents"], "documents",
                   f"nothing written; the finished documents are kept in {out}")
    if result.failed:
        click.echo(f"warning: {len(result.failed)} documents have no questions; build again (--force) to ask about "
                   "them again (their failed answers are not cached)", err=True)
    return list(questions) + result.questions, info
