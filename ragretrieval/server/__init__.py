"""The web app (``ragretrieval serve``): question sets, evaluations that run in the background, results side by side.

``app.py`` builds the FastAPI application; ``routes/`` holds the JSON API and the pages, ``templates/`` and
``static/`` what the pages are made of (Jinja2 and a little plain JavaScript, no build step); ``store/`` reads and
writes the rows (tables in ``ragretrieval/runs/schema.py``); ``jobs/`` runs evaluations in the background
(claims, heartbeats, takeover, and the engine seam); ``security.py`` keeps it safe by default. docs/web.md describes
the pages, the API, the security model and the workers.
"""

from .settings import ServeSettings

__all__ = ["ServeSettings", "create_app"]


def __getattr__(name: str):
    """`create_app` loads the app (FastAPI, SQLAlchemy) when asked for, so reading `ServeSettings` stays light: the
    command line reads its defaults when ``serve --help`` declares its options."""
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
