"""The pages in Chinese and English: every message the templates and scripts use has its Chinese translation with the
same placeholders (and the catalogue holds nothing unused), the language follows the browser's Accept-Language
unless the switch chose one, ``<html lang>`` says which, and the API keeps its `detail` in English."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from jinja2 import Environment
from jinja2.ext import extract_from_ast

from ragretrieval.server import i18n

HERE = Path(i18n.__file__).parent


def template_messages() -> set[str]:
    """Every literal ``_("...")`` of the templates (a call with a variable gives None: i18n.DYNAMIC_MESSAGES)."""
    env = Environment(extensions=["jinja2.ext.do"])
    found = set()
    for path in (HERE / "templates").glob("*.html"):
        tree = env.parse(path.read_text(encoding="utf-8"))
        for _, _, message in extract_from_ast(tree, gettext_functions=("_",)):
            message = message[0] if isinstance(message, tuple) else message  # _("{n} questions", n=...)
            if isinstance(message, str):
                found.add(message)
    return found


def used_messages() -> set[str]:
    return template_messages() | set(i18n.script_messages()) | set(i18n.DYNAMIC_MESSAGES)


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_message_has_its_chinese_translation_and_nothing_is_unused():
    zh = i18n.catalogue("zh")
    used = used_messages()
    assert sorted(used - set(zh)) == [], "messages without a translation in locales/zh.json"
    assert sorted(set(zh) - used) == [], "translations no page uses"
    for message, translated in zh.items():
        assert placeholders(message) == placeholders(translated), message
        assert translated.strip() and translated != message or not re.search(r"[a-z]{3}", message), message


@pytest.mark.parametrize(("header", "language"), [
    (None, "en"), ("", "en"), ("zh-CN,zh;q=0.9,en;q=0.8", "zh"), ("en-US,en;q=0.9,zh;q=0.8", "en"),
    ("fr-FR, de;q=0.9", "en"), ("fr, zh-TW;q=0.5", "zh"), ("zh-Hans", "zh"), ("en;q=0.2, zh;q=0.8", "zh"),
    ("zh;q=0, en", "en"), ("zh;q=abc, en;q=0.1", "en"), ("*", "en"), (";;;,,,q=", "en"), ("x" * 5000, "en")])
def test_accept_language_is_negotiated_by_its_quality_values(header, language):
    assert i18n.negotiate(header) == language


def test_pages_follow_the_browser_then_the_switch(api):
    client = api.client
    english = client.get("/evaluations/list").text
    assert '<html lang="en">' in english and ">Question sets<" in english
    chinese = client.get("/evaluations/list", headers={"Accept-Language": "zh-CN,zh;q=0.9"}).text
    assert '<html lang="zh">' in chinese and ">问题集<" in chinese and ">Question sets<" not in chinese
    assert '"Deleted \\u201c{name}\\u201d."' in chinese or "已删除" in chinese  # the scripts' messages come along

    switched = client.get("/language/zh?next=/evaluations/question-sets", follow_redirects=False)
    assert switched.status_code == 303 and switched.headers["location"] == "/evaluations/question-sets"
    assert "rr_lang=zh" in switched.headers["set-cookie"]
    assert '<html lang="zh">' in client.get("/evaluations/list", headers={"Accept-Language": "en"}).text
    client.get("/language/en", follow_redirects=False)
    assert '<html lang="en">' in client.get("/evaluations/list", headers={"Accept-Language": "zh"}).text


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x", "/\\evil", "javascript:alert(1)"])
def test_the_switch_only_goes_back_to_this_server(api, target):
    answer = api.client.get("/language/zh", params={"next": target}, follow_redirects=False)
    assert answer.headers["location"] == "/evaluations/list"


@pytest.mark.parametrize("code", ["fr", "ZH", "../../etc", "zh;q=1", ""])
def test_an_unknown_language_is_refused_and_no_cookie_is_set(api, code):
    answer = api.client.get(f"/language/{code}", follow_redirects=False)
    assert answer.status_code == 404 and "rr_lang" not in answer.headers.get("set-cookie", "")


def test_a_forged_language_cookie_falls_back_to_the_browser(api):
    api.client.cookies.set("rr_lang", "<script>")
    text = api.client.get("/evaluations/list", headers={"Accept-Language": "zh"}).text
    assert '<html lang="zh">' in text and "<script>\"" not in text


def test_the_api_detail_stays_english(api):
    """A script reads `detail` in English whatever the language; a Chinese page's script shows `message`."""
    answer = api.client.get("/api/v1/evaluations/eval_0000000000000000", headers={"Accept-Language": "zh-CN"})
    assert answer.status_code == 404 and answer.json() == {"detail": "no evaluation 'eval_0000000000000000'",
                                                           "message": "没有评测 'eval_0000000000000000'"}
    english = api.client.get("/api/v1/evaluations/eval_0000000000000000")
    assert english.json() == {"detail": "no evaluation 'eval_0000000000000000'"}


def test_the_form_lists_score5_first_and_says_needs_for_one_judge(api):
    page = api.client.get("/evaluations/new").text
    names = re.findall(r'name="judge" value="([^"]+)"', page)
    assert names[0] == "score5" and len(names) > 1
    assert "{judges} needs a reference answer: {missing}" in page
