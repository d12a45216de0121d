"""``ragretrieval plugins``: the retrievers, embedders, stores, answer generators and judges this installation
knows, and where they come from."""

from __future__ import annotations

import click

from ..answers.generators.registry import SUMMARY, available_generators
from ..answers.judges.registry import SUMMARY as JUDGES
from ..answers.judges.registry import available_judges
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
    lines.append("generators (answer --generator SPEC):")
    for name, source in sorted(available_generators().items()):
        shown = name + ("..." if name.endswith(":") else "")
        lines.append(f"  {shown:<16} {source}" + (f" {SUMMARY[name]}" if name in SUMMARY else ""))
    lines.append("judges (answer --judge NAME, judge-answers):")
    for name, source in sorted(available_judges().items()):
        lines.append(f"  {name:<20} {source}" + (f" {JUDGES[name]}" if name in JUDGES else ""))
    return lines


@click.command("plugins")
def plugins_command() -> None:
    """List the retrievers, embedders, vector stores, answer generators and judges that are installed."""
    click.echo("\n".join(plugin_lines()))
