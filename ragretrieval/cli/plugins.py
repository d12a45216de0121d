"""``ragretrieval plugins``: the retrievers, embedders, stores and answer generators this installation knows, and
where they come from."""

from __future__ import annotations

import click

from ..answers.generators.registry import SUMMARY, available_generators
from ..embedders.registry import families
from ..retrieval.registry import available_retrievers, retriever_class
from ..stores import available_stores


def plugin_lines() -> list[str]:
    lines = ["retrievers (eval --retriever NAME):"]
    for name, source in sorted(available_retrievers().items()):
        try:
            swept = " sweepable" if retriever_class(name).sweepable else ""
        except Exception as error:  # a broken plugin must not hide the others
            swept = f" cannot load: {error}"
        lines.append(f"  {name:<16} {source}{swept}")
    lines.append("embedders (--model NAME; any other name is a sentence-transformers id or folder):")
    lines += [f"  {family.shown_as:<16} {family.summary}" for family in families()]
    lines.append("stores (--store NAME; details: ragretrieval stores):")
    lines += [f"  {name:<16} {source}" for name, source in sorted(available_stores().items())]
    lines.append("generators (answer --generator SPEC):")
    for name, source in sorted(available_generators().items()):
        shown = name + ("..." if name.endswith(":") else "")
        lines.append(f"  {shown:<16} {source}" + (f" {SUMMARY[name]}" if name in SUMMARY else ""))
    return lines


@click.command("plugins")
def plugins_command() -> None:
    """List the retrievers, embedders, vector stores and answer generators that are installed."""
    click.echo("\n".join(plugin_lines()))
