"""``/login`` and ``/logout``: the page side of ``serve --token`` (the API takes the token as a bearer token)."""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse

from ..security import CSRF_COOKIE, SESSION_COOKIE, same, session_value
from . import deps

router = APIRouter(include_in_schema=False)


def safe_next(target: str | None) -> str:
    """Only a path on this server (never ``//host`` or ``https://...``): the login cannot send anyone elsewhere."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/evaluations/list"
    return target


async def form(request: Request) -> dict[str, str]:
    fields = parse_qs((await request.body()).decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[0] for name, values in fields.items()}


@router.get("/login")
def login_page(request: Request, next: str | None = None):
    if not deps.settings(request).token:
        return RedirectResponse(safe_next(next), status_code=303)
    return request.app.state.templates.TemplateResponse(request, "login.html", {"next": safe_next(next)})


@router.post("/login")
async def login(request: Request):
    fields = await form(request)
    token = deps.settings(request).token
    target = safe_next(fields.get("next"))
    if not same(fields.get("csrf"), request.cookies.get(CSRF_COOKIE)):
        return request.app.state.templates.TemplateResponse(
            request, "login.html", {"next": target, "error": "The form expired: try again."}, status_code=403)
    if not token or not same(fields.get("token", "").strip(), token):
        return request.app.state.templates.TemplateResponse(
            request, "login.html", {"next": target, "error": "Wrong token."}, status_code=401)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(SESSION_COOKIE, session_value(token), httponly=True, samesite="strict", path="/")
    return response


@router.post("/logout")
async def logout(request: Request):
    fields = await form(request)
    response = RedirectResponse("/login", status_code=303)
    if same(fields.get("csrf"), request.cookies.get(CSRF_COOKIE)):
        response.delete_cookie(SESSION_COOKIE, path="/")
    return response
