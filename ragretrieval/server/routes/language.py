"""``/language/{code}``: the language switch in every page's header. It keeps the choice in the ``rr_lang`` cookie
(a year; it wins over the browser's Accept-Language, i18n.py) and goes back to the page it was clicked on."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse

from ..i18n import COOKIE, LANGUAGES
from ..store import NotFound
from .auth import safe_next

router = APIRouter(include_in_schema=False)
YEAR = 365 * 24 * 3600


@router.get("/language/{code}")
def choose_language(request: Request, code: str, next: str | None = None):
    if code not in LANGUAGES:
        raise NotFound(f"no language {code!r}; the pages are in {', '.join(LANGUAGES)}")
    response = RedirectResponse(safe_next(next), status_code=303)
    response.set_cookie(COOKIE, code, max_age=YEAR, httponly=True, samesite="lax", path="/")
    return response
