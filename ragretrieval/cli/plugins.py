"""``ragretrieval plugins``: the retrievers, embedders, stores, answer generators and judges this installation
knows, and where they come from."""

from __future__ import annotations

import click

from ..answers.generators.registry import SUMMARY, available_generators, generator_class
from ..answers.judges.registry import SUMMARY as JUDGES
from ..answers.judges.registry import available_judges
from ..embedders.registry import families
from ..embedders.settings import EmbedSettings
from ..retrieval.registry import available_retrievers, retriever_class
from ..retrieval.rerank.base import RerankSettings
from ..retrieval.rerank.registry import SUMMARIES, available_rerankers
from ..stores import available_stores, store_class
from ..work.options import option_lines


def _options(load, verbose: bool) -> list[str]:
    """A plug-in's options (``-v``), one line each: name, type, default, help."""
    if not verbose:
        return []
    try:
        return option_lines(getattr(load(), "Options", None))
    except Exception as error:  # a broken plugin must not hide the others
        return [f"    cannot load: {error}"]


def plugin_lines(verbose: bool = False) -> list[str]:
    lines = ["retrievers (eval --retriever NAME; options: --retriever-option KEY=VALUE):"]
    for name, source in sorted(available_retrievers().items()):
        try:
            plugin = retriever_class(name)
            swept = " sweepable" if plugin.sweepable else ""
            swept += "" if getattr(plugin, "first_stage", True) else " (after a first stage: --rerank NAME)"
        except Exception as error:  # a broken plugin must not hide the others
            swept = f" cannot load: {error}"
        lines.append(f"  {name:<16} {source}{swept}")
        lines += _options(lambda name=name: retriever_class(name), verbose and "cannot load" not in swept)
    lines.append("embedders (--model NAME; any other name is a sentence-transformers id or folder):")
    lines += [f"  {family.shown_as:<16} {family.summary}" for family in families()]
    if verbose:
        lines.append("  settings of every embedder (--embed-*, --query-prefix, --passage-prefix):")
        lines += option_lines(EmbedSettings)
    lines.append("rerankers (--rerank NAME):")
    lines += [f"  {prefix + 'NAME':<16} {SUMMARIES.get(prefix, 'from ' + source)}"
              for prefix, source in available_rerankers().items()]
    if verbose:
        lines.append("  settings of every reranker (--rerank-*):")
        lines += option_lines(RerankSettings)
    lines.append("stores (--store NAME; options: --store-option KEY=VALUE; details: ragretrieval stores):")
    for name, source in sorted(available_stores().items()):
        lines.append(f"  {name:<16} {source}")
        lines += _options(lambda name=name: store_class(name), verbose)
    lines.append("generators (answer --generator SPEC; options: --generator-option KEY=VALUE):")
    for name, source in sorted(available_generators().items()):
        shown = name + ("..." if name.endswith(":") else "")
        lines.append(f"  {shown:<16} {source}" + (f" {SUMMARY[name]}" if name in SUMMARY else ""))
        lines += _options(lambda name=name: generator_class(name + ("x" if name.endswith(":") else ""))[0],
                          verbose)
    lines.append("judges (answer --judge NAME, judge answers):")
    for name, source in sorted(available_judges().items()):
        lines.append(f"  {name:<20} {source}" + (f" {JUDGES[name]}" if name in JUDGES else ""))
    return lines


@click.command("plugins")
@click.option("-v", "--verbose", is_flag=True, help="Also list each plug-in's options: name, type, default, help.")
def plugins_command(verbose) -> None:
    """List the retrievers, embedders, vector stores, answer generators and judges that are installed."""
    click.echo("\n".join(plugin_lines(verbose)))
