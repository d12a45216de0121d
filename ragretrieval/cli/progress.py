"""The progress every command shows: bars on standard error unless ``--no-progress``, notes always."""

from __future__ import annotations

import click

from ..work.progress import TerminalProgress

no_progress_option = click.option("--no-progress", is_flag=True, help="Hide progress bars (notes are still shown).")


def terminal_progress(no_progress: bool) -> TerminalProgress:
    """A `TerminalProgress` closed when the command ends."""
    progress = TerminalProgress(bars=not no_progress)
    context = click.get_current_context(silent=True)
    if context is not None:
        context.call_on_close(progress.close)
    return progress
