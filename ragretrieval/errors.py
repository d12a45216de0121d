"""The root of every error ragretrieval raises on purpose, and the two kinds of failure a command tells apart.

Bad input (a file, a line, a field), settings that cannot work, a service that cannot be reached: each is a
`RagretrievalError` subclass whose message says what and where. The command line catches this root once and prints
one ``Error: ...`` line with exit status `exit_code`: 2 where the user must change the command or its input
(`InputError`: a file that is not there, a name nothing answers to, a grid that cannot run, a file of theirs it
would replace), 1 where the work failed. Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class RagretrievalError(Exception):
    """An error with a message meant for the user; the CLI prints it without a traceback."""

    exit_code = 1


class InputError(RagretrievalError):
    """What the user must change before anything can run: the command line exits with status 2. A class that is
    also another error class (``class UnknownMetric(MetricError, InputError)``) keeps its family and takes this
    status."""

    exit_code = 2


class MissingInputError(InputError):
    """A file or folder the work reads that is not there (a name to give anew). Readers raise it before their own
    error classes, which let it through unchanged."""


def cannot_read(path, error: OSError, kind: type[RagretrievalError] = RagretrievalError,
                what: str = "") -> RagretrievalError:
    """The error for a file that could not be read, ``path: cannot read[ what] (reason)``: a `MissingInputError`
    when it is not there or is a folder (the command must name another), else `kind`."""
    missing = isinstance(error, (FileNotFoundError, IsADirectoryError, NotADirectoryError))
    words = f"cannot read {what}" if what else "cannot read"
    return (MissingInputError if missing else kind)(f"{path}: {words} ({error.strerror or error})")
