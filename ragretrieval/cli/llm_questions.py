"""The ``--generator llm`` part of ``build-dataset``: turns its options into settings, runs the LLM builder, reports
what was kept and dropped, and maps every LLM failure to a clear command-line error."""

from __future__ import annotations

import click

from ..llm.client import LLMError
from ..llm.journal import JournalError
from ..llm.prompts import PromptError
from .llm_options import llm_settings


def add_llm_questions(documents, out, questions, *, per_doc, types_text, model, base_url, api_key_env, concurrency,
                      max_docs, prompt_file, language, price_in, price_out, timeout, max_retries, no_progress):
    """`questions` plus the LLM's, and the manifest's record of the LLM run."""
    from ..llm.build import OptionError, QuestionOptions, llm_questions, parse_types
    from ..llm.questions import exact_key

    settings = llm_settings(model, base_url, api_key_env, timeout, max_retries, price_in, price_out)
    try:
        options = QuestionOptions(per_doc=per_doc, types=parse_types(types_text), concurrency=concurrency,
                                  max_docs=max_docs, prompt_file=prompt_file, language=language)
        result, info = llm_questions(list(documents), out, settings, options,
                                     taken={exact_key(q.text) for q in questions}, progress=not no_progress)
    except (OptionError, PromptError, LLMError, JournalError) as error:
        raise click.ClickException(str(error)) from None
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
    return list(questions) + result.questions, info
