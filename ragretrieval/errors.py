"""The root of every error ragretrieval raises on purpose.

Bad input (a file, a line, a field), settings that cannot work, a service that cannot be reached: each is a
`RagretrievalError` subclass whose message says what and where. The command line catches this root once and prints
one ``Error: ...`` line with exit status `exit_code` (1, or 2 where a command documents it); anything else that
escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class RagretrievalError(Exception):
    """An error with a message meant for the user; the CLI prints it without a traceback."""

    exit_code = 1
