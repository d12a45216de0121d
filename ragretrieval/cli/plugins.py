"""``ragretrieval plugins``: the retrievers, embedders and stores this installation knows, and where they come from."""

from __future__ import annotations

import click

from ..embedders.registry import families
from ..retrieval.registry import available_retrievers, retriever_class
from ..retrieval.rerank.registry import SUMMARIES, available_rerankers
from ..stores import available_stores


def plugin_lines() -> list[str]:
    lines = ["retrievers (eval --retriever NAME):"]
    for name, source in sorted(available_retrievers().items()):
        try:
            plugin = retriever_class(name)
            swept = " sweepable" if plugin.sweepable else ""
            swept += "" if getattr(plugin, "first_stage", True) else " (after a first stage: --rerank NAME)"
        except Exception as error:  # a broken plugin must not hide the others
            swept = f" cannot load: {error}"
        lines.append(f"  {name:<16} {source}{swept}")
    lines.append("embedders (--model NAME; any other name is a sentence-transformers id or folder):")
    lines += [f"  {family.shown_as:<16} {family.summary}" for family in families()]
    lines.append("rerankers (--rerank NAME):")
    lines += [f"  {prefix + 'NAME':<16} {SUMMARIES.get(prefix, 'from ' + source)}"
              for prefix, source in available_rerankers().items()]
    lines.append("stores (--store NAME; details: ragretrieval stores):")
    lines += [f"  {name:<16} {source}" for name, source in sorted(available_stores().items())]
    return lines


@click.command("plugins")
def plugins_command() -> None:
    """List the retrievers, embedders and vector stores that are installed."""
    click.echo("\n".join(plugin_lines()))
