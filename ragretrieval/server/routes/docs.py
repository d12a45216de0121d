"""``/docs``: Swagger UI over ``/openapi.json``, served from this machine (the assets come with the fastapi-offline
package; nothing is fetched from a CDN), with the same-origin token added to the requests it sends."""

from __future__ import annotations

from fastapi import APIRouter, Request

router = APIRouter(include_in_schema=False)


@router.get("/docs")
def docs_page(request: Request):
    assets = any(getattr(route, "name", "") == "docs-assets" for route in request.app.routes)
    return request.app.state.templates.TemplateResponse(request, "docs.html", {"assets": assets})
