"""The web app (``ragretrieval serve``): question sets, evaluations that run in the background, results side by side.

``app.py`` builds the FastAPI application; ``routes/`` holds the JSON API and the pages, ``templates/`` and
``static/`` what the pages are made of (Jinja2 and a little plain JavaScript, no build step); ``store/`` reads and
writes the rows (tables in ``ragretrieval/runs/schema.py``); ``jobs/`` runs evaluations in the background
(claims, heartbeats, takeover, and the engine seam); ``security.py`` keeps it safe by default. docs/web.md describes
the pages, the API, the security model and the workers.
"""

from .app import create_app
from .settings import ServeSettings

__all__ = ["ServeSettings", "create_app"]
