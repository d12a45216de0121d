"""The app factory: `create_app(settings)` gives the FastAPI application behind ``ragretrieval serve`` (pages, JSON
API, OpenAPI docs at ``/docs``), on the runs history's database, with a worker inside unless told otherwise."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, pass_context

from ..errors import RagretrievalError
from ..llm.client import LLMError
from ..work.options import SettingsError
from .answer_diff import word_diff
from .db import Database
from .i18n import CLASS_MEANINGS, LANGUAGES, request_language, script_catalogue, translate
from .jobs.engine import Engine, load_engine
from .jobs.worker import Worker
from .rendering import is_long, markdown_html, public_text
from .security import Guard
from .server_messages import server_message
from .settings import ServeSettings
from .store import Conflict, Invalid, NotFound
from .views import headline

HERE = Path(__file__).parent
API_PREFIXES = ("/api/", "/openapi.json")
STATUS = [(NotFound, 404), (Conflict, 409), (Invalid, 400), (LLMError, 502), (RagretrievalError, 400)]
log = logging.getLogger("ragretrieval.server")


def when(stamp: str | None) -> str:
    """A stored time as the pages show it: ``2026-11-22 10:37:27`` (UTC), or a dash."""
    return f"{stamp[:10]} {stamp[11:19]}" if stamp else "–"


@pass_context
def short(context, value) -> str:
    """A score or check value without noise: 5, 4.5, 0.667, yes, no."""
    if isinstance(value, bool):
        return gettext(context, "yes" if value else "no")
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() else f"{value:.3g}"
    return "–" if value is None else str(value)


@pass_context
def gettext(context, message: str, **values) -> str:
    """``{{ _("Question sets") }}``: `message` in the language of the page's request (i18n.py)."""
    return translate(request_language(context["request"]), message, **values)


@pass_context
def page_language(context) -> str:
    return request_language(context["request"])


@pass_context
def page_messages(context) -> dict[str, str]:
    """The translations the page's scripts need (common.js `t`), handed over as JSON."""
    return script_catalogue(request_language(context["request"]))


def templates() -> Jinja2Templates:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True,  # every value escaped
                      extensions=["jinja2.ext.do"])
    env.filters.update(when=when, short=short, markdown=markdown_html, public=public_text, headline=headline)
    env.tests.update(long=is_long)
    env.globals.update(_=gettext, language=page_language, languages=LANGUAGES, script_messages=page_messages)
    env.globals.update(word_diff=word_diff, CLASS_MEANINGS=CLASS_MEANINGS)
    return Jinja2Templates(env=env)


def create_app(settings: ServeSettings = ServeSettings(), engine: Engine | None = None) -> FastAPI:
    """The application; `engine` replaces the one `settings.engine` names (tests pass their own)."""
    db = Database(settings.runs_db)  # RunHistoryError (a bad URL, a newer schema) reaches the CLI as one line
    worker = None
    if settings.worker:
        from .corpora import find_corpus

        def locate(name: str) -> str | None:
            try:
                return str(find_corpus(settings.datasets, name).path)
            except Invalid:
                return None

        engine = engine or load_engine(settings.engine, settings.api_key_env)
        worker = Worker(db, engine, settings.worker_settings, locate)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if worker:
            worker.start()
        try:
            yield
        finally:
            if worker:
                worker.stop()
            db.close()

    app = FastAPI(title="ragretrieval", summary="Question sets, evaluations in the background, results side by side",
                  docs_url=None, redoc_url=None, lifespan=lifespan)
    app.state.settings, app.state.db, app.state.worker = settings, db, worker
    app.state.templates = templates()
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    try:
        import fastapi_offline

        assets = Path(fastapi_offline.__file__).parent / "static"
        app.mount("/docs-assets", StaticFiles(directory=assets), name="docs-assets")
    except ImportError:  # the docs page then says how to get it; /openapi.json works regardless
        pass
    from .routes import (
        annotations,
        auth,
        compare,
        corpora,
        docs,
        evaluations,
        export,
        language,
        pages,
        question_sets,
        review,
        set_pages,
        trends,
    )

    for module in (question_sets, evaluations, annotations, export, compare, corpora, auth, docs, language,
                   review, trends, set_pages, pages):
        app.include_router(module.router)
    _errors(app)
    app.add_middleware(Guard, settings=settings)
    return app


def _errors(app: FastAPI) -> None:
    async def known(request: Request, error: RagretrievalError):
        status = next(code for kind, code in STATUS if isinstance(error, kind))
        text = public_text(str(error))
        said = server_message(request_language(request), text)
        if request.url.path.startswith(API_PREFIXES):  # `detail` stays English for scripts; a page shows `message`
            return JSONResponse({"detail": text, **({"message": said} if said != text else {})}, status_code=status)
        return request.app.state.templates.TemplateResponse(
            request, "error.html", {"status": status, "message": said}, status_code=status)

    app.add_exception_handler(RagretrievalError, known)

    async def settings(request: Request, error: SettingsError):
        """Settings that cannot work are field errors, shaped as FastAPI's 422: each field's place in the body."""
        places = error.fields or ("body",)
        problems = [{"loc": ["body", *field.split(".")], "msg": str(error), "type": "value_error"}
                    for field in places]
        return JSONResponse({"detail": problems}, status_code=422)

    app.add_exception_handler(SettingsError, settings)

    async def invalid(request: Request, error: RequestValidationError):
        """FastAPI's 422 with each problem's place, without echoing the input (it may be large, or a secret)."""
        problems = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
                    for e in error.errors()]
        return JSONResponse({"detail": problems}, status_code=422)

    app.add_exception_handler(RequestValidationError, invalid)
