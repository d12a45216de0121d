"""Files of the user's own data (datasets, question sets and their exports, imported traces) are replaced only when
asked; report files a command writes again on every run (``--out`` of eval, answer, judge, runs export, runs report)
are not this module's business and are replaced as they are."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..work.options import SettingsError


def refuse_to_replace(paths: Iterable, force: bool) -> None:
    """Raise a `SettingsError` naming every one of `paths` (None skipped) that exists, unless `force`: the command
    must say so (``--force``, exit 2)."""
    existing = [str(p) for p in paths if p is not None and Path(p).exists()]
    if existing and not force:
        raise SettingsError(f"{', '.join(existing)}: already exists; pass force to replace it", ["force"])
