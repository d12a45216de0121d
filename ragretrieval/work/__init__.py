"""How long work is followed and controlled, whoever runs it (the CLI, a sweep, the web app's workers).

- `Progress` (progress.py): library code reports stages, steps and notes through this protocol and never draws a
  progress bar itself; the CLI passes `TerminalProgress`, a server passes one that writes to its database.
- `StopToken` (stop.py): checked between embedding batches, LLM requests, questions and sweep cells, so a job can
  pause at a boundary; whatever finished is already in a cache or journal, so resuming costs nothing.
- `with_retries` (retry.py): one retry loop with exponential backoff, jitter and ``Retry-After``.
- `parallel_map` (pool.py): calls on a bounded thread pool, results as they finish, stop and errors handled once.
- named.py: plug-ins found by name, from a built-in table and an entry-point group (the registries' shared part).
"""

from .pool import parallel_map
from .progress import Progress, RecordingProgress, Silent, TerminalProgress, as_progress
from .retry import RetriesExhausted, with_retries
from .stop import Stopped, StopToken

__all__ = ["Progress", "RecordingProgress", "RetriesExhausted", "Silent", "StopToken", "Stopped", "TerminalProgress",
           "as_progress", "parallel_map", "with_retries"]
