"""``python -m ragretrieval``: the same as the ``ragretrieval`` command."""

from .cli import main

if __name__ == "__main__":
    main()
