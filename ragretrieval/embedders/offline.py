"""Offline mode for a model load that reads a folder: ``HF_HUB_OFFLINE`` is set around the load only, and the
process's environment is as it was once the load is done, so a later hub download (by the user's own code in the
same process, or a hub model loaded afterwards) is not refused because a folder was loaded first."""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Iterator

VARIABLE = "HF_HUB_OFFLINE"

_lock = threading.Lock()
_holders = 0
_saved: tuple[str | None, bool] = (None, False)


@contextmanager
def hub_offline() -> Iterator[None]:
    """Hugging Face libraries offline for the block: the variable for the code that reads it when it looks, and
    huggingface_hub's constant, which the library reads once, on its first import. Blocks in several threads at once
    share one offline period: the first to enter keeps what was there, the last to leave puts it back."""
    import huggingface_hub.constants as hub  # before the variable is set: its constant then says what the user set

    global _holders, _saved
    with _lock:
        if _holders == 0:
            _saved = (os.environ.get(VARIABLE), hub.HF_HUB_OFFLINE)
            os.environ[VARIABLE] = "1"
            hub.HF_HUB_OFFLINE = True
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                variable, constant = _saved
                if variable is None:
                    os.environ.pop(VARIABLE, None)
                else:
                    os.environ[VARIABLE] = variable
                hub.HF_HUB_OFFLINE = constant
