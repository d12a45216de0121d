"""What the browser tests share: `ragretrieval serve` as a process with its built-in engine, a RAG service and an
OpenAI-compatible model on 127.0.0.1, Debian's headless Chromium driven by playwright, and a page that records
every script error. Each test module gets its own server (module-scoped fixtures); `api` here is the HTTP API of
that server (it replaces the TestClient one of tests/server/conftest.py).

With ``RAGRETRIEVAL_SCREENSHOTS=DIR`` the tests also save the screenshots docs/web.md shows (`shot`).
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import httpx
import pytest
from llm.conftest import good_reply

from ragretrieval.testing.chat_server import DOCUMENT, ChatServer, Reply

from ..conftest import Api
from ..processes import Server, environment
from ..rag_service import RagService, default_respond

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = os.environ.get("RAGRETRIEVAL_SCREENSHOTS")
SHOT_LIMIT = 200_000  # bytes: docs/web.md's pictures stay small
EVIL = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'
CSV_TEXT = ("\ufeffquestion_type,question_text,ground_truth\r\n"
            'FACTUAL,红烧肉要炖多久？,"小火炖 40 分钟, 再大火收汁"\r\n'
            'INFERENTIAL,"Why brown the sugar first, before the meat?","It gives the colour\r\nand the ""caramel"" '
            'taste"\r\n'
            ",没有类型的问题,\r\n")



def pytest_collection_modifyitems(config, items):
    """Every browser test needs Debian's chromium."""
    if Path(CHROMIUM).exists() and shutil.which("chromium") is not None:
        return
    skip = pytest.mark.skip(reason="Debian's chromium package is not installed (make test installs it)")
    for item in items:
        if "/browser/" in str(item.fspath):
            item.add_marker(skip)


def respond(request: dict) -> dict:
    """The default answer, with the question echoed into its source too (the XSS test needs it)."""
    answer = default_respond(request)
    answer["retrieved_context"].append({"doc_uri": request["query"], "content": request["query"]})
    return answer


def model_reply(request: dict) -> Reply:
    """Questions about a document (the Generate dialog), a score5 verdict for ``judge-model``, else an answer citing
    the first two contexts."""
    if request["model"] == "judge-model":
        return Reply(json.dumps({"score": 4, "reasoning": "做法对，<b>火候</b>没说"}, ensure_ascii=False))
    if DOCUMENT.search(request["messages"][-1]["content"]):
        return good_reply(request)
    return Reply("根据文档 [0]，做法见上 [1]。")


@pytest.fixture(scope="module")
def services():
    with RagService(respond) as rag, ChatServer(model_reply) as model:
        yield rag, model


@pytest.fixture(scope="module")
def server(tmp_path_factory, datasets, services):
    folder = tmp_path_factory.mktemp("browser")
    env = environment(OPENAI_API_KEY="sk-browser-test", RAGRETRIEVAL_CACHE_DIR=str(folder / "cache"))
    runs_db = f"sqlite:///{folder / 'runs.sqlite'}"
    process = Server(runs_db, datasets, folder / "serve.log", env=env)
    process.runs_db = runs_db  # tests that store a result or an error directly open the same database
    yield process
    process.stop()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def open_page(browser, server, width: int = 1280, height: int = 900, locale: str = "en-US"):
    context = browser.new_context(base_url=server.url, viewport={"width": width, "height": height}, locale=locale)
    tab = context.new_page()
    tab.errors = []
    tab.on("console", lambda message: tab.errors.append(message.text) if message.type == "error" else None)
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    tab.on("dialog", lambda dialog: dialog.accept())  # "Delete ...?" confirmations
    return tab


@pytest.fixture
def page(browser, server):
    tab = open_page(browser, server)
    yield tab
    tab.context.close()


@pytest.fixture
def api(server):
    client = Api(httpx.Client(base_url=server.url, timeout=30))
    yield client
    client.client.close()


def shot(page, name: str, height: int | None = None, part=None) -> None:
    """The page (its first `height` pixels when given; only the element `part`, a locator, when given) as
    docs/images/NAME.png, when screenshots are asked for; reduced to a 64-colour palette by Pillow when it is
    installed, and kept under SHOT_LIMIT bytes."""
    if not SHOTS:
        return
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    clip = {"x": 0, "y": 0, "width": page.viewport_size["width"], "height": height} if height else None
    target = Path(SHOTS) / f"{name}.png"
    data = part.screenshot() if part is not None else page.screenshot(full_page=True, clip=clip)
    try:
        from PIL import Image

        image = Image.open(io.BytesIO(data)).convert("RGB").quantize(colors=64)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", optimize=True)
        data = buffer.getvalue()
    except ImportError:
        pass
    assert len(data) < SHOT_LIMIT, f"{target}: {len(data)} bytes; take less of the page"
    target.write_bytes(data)


def fits(page) -> bool:
    """No horizontal scrolling: the page is no wider than the window."""
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def in_view(locator) -> bool:
    """The element's box lies inside the window horizontally (it can be seen and clicked without scrolling sideways)."""
    box = locator.bounding_box()
    width = locator.page.viewport_size["width"]
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
