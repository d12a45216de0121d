"""How stored text is shown: answers as sanitised Markdown against hostile input, errors without server paths,
checks told apart from judges, aggregates and usage, judges' counts in the summary (when the API gives them), and
files that are not UTF-8 decoded by charset-normalizer or refused."""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser

import pytest

from ragretrieval.io.text_encoding import EncodingError, decode_text
from ragretrieval.server.rendering import MARKDOWN_TAGS, is_long, markdown_html, public_text
from ragretrieval.server.views import card_checks, judges_line, summary_means

HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<svg onload=alert(1)>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](  javascript:alert(1))",
    "[click](java&#09;script:alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click][ref]\n\n[ref]: javascript:alert(1)",
    "<javascript:alert(1)>",
    "![x](javascript:alert(1))",
    "![x](https://tracker.example/pixel.png)",
    '<a href="javascript:alert(1)">x</a>',
    "<iframe src=https://evil.example></iframe>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    "```html\n<script>alert(1)</script>\n```",
    "<!-- <script>alert(1)</script> -->",
    '[x](https://ok.example "title" onmouseover="alert(1)")',
    "<details open ontoggle=alert(1)>",
]


class Elements(HTMLParser):
    """The elements and attributes a browser would build from the HTML (what text merely shows is not one)."""

    def __init__(self, html: str):
        super().__init__()
        self.found: list[tuple[str, dict]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


@pytest.mark.parametrize("text", HOSTILE)
def test_no_script_handler_or_dangerous_url_survives_the_markdown(text):
    html = str(markdown_html(text))
    for tag, attributes in Elements(html).found:
        assert tag in MARKDOWN_TAGS, html
        assert set(attributes) <= {"href", "rel"}, html  # no on*, no style, no src
        if "href" in attributes:
            assert attributes["href"].startswith(("https://", "http://", "mailto:")), html


def test_markdown_keeps_what_answers_use():
    html = str(markdown_html("**bold** and *it*\n\n- one\n- two\n\n`code` [site](https://example.org/a?b=1)\n"
                             "line\nbreak [0]\n\n| a | b |\n|---|---|\n| 1 | 2 |"))
    assert "<strong>bold</strong>" in html and "<em>it</em>" in html and "<li>one</li>" in html
    assert "<code>code</code>" in html and "<table>" in html and "line<br>" in html and "[0]" in html
    assert '<a href="https://example.org/a?b=1" rel="noopener noreferrer nofollow">site</a>' in html
    assert str(markdown_html("")) == "" and str(markdown_html(None)) == ""


def test_long_texts_are_told_apart():
    assert not is_long("short") and not is_long(None) and not is_long("")
    assert is_long("x" * 1201) and is_long("line\n" * 14) and not is_long("line\n" * 13)


@pytest.mark.parametrize("message, shown", [
    ("cannot start: [Errno 2] No such file or directory: '/srv/data/corpus/manifest.json'",
     "cannot start: [Errno 2] No such file or directory: '…/manifest.json'"),
    ("/home/me/my corpus/questions.jsonl line 3: bad", "…/questions.jsonl line 3: bad"),
    ("cache ~/.cache/ragretrieval/answers.sqlite is full", "cache …/answers.sqlite is full"),
    ("POST http://host:8000/api/answer failed", "POST http://host:8000/api/answer failed"),
    ("use `ragretrieval answer --generator file:PATH` for it", "use the command line for it"),
    ("score 1/5 and 3/4", "score 1/5 and 3/4"),
    (None, None), ("", ""),
])
def test_errors_shown_to_web_users_name_no_server_path_and_no_command(message, shown):
    assert public_text(message) == shown


def test_checks_judges_aggregates_and_usage_are_told_apart():
    shown = card_checks({
        "include": 1.0, "exclude": 0.0, "cite_f1": 0.5, "checks_correctness": 0.5, "total": 0.5, "checks_score": 0.5,
        "agent/input_token_count": 120.0, "agent/total_token_count": 150.0,
        "groundedness": {"value": 1.0, "reasoning": "supported"},
        "relevance_to_query": {"value": None, "error": "reply was not JSON"},
        "correctness_judge": {"value": None, "skipped": "no reference answer"}})
    assert [(p["name"], p["state"]) for p in shown["conditions"]] == [("include", "pass"), ("exclude", "fail"),
                                                                      ("cite_f1", "part")]
    assert [(p["name"], p["state"], p["title"]) for p in shown["judges"]] == [
        ("groundedness", "pass", "supported"), ("relevance_to_query", "failed", "reply was not JSON"),
        ("correctness_judge", "na", "no reference answer")]
    assert shown["aggregates"] == {"checks_correctness": 0.5, "total": 0.5} and shown["check_score"] == 0.5
    empty = card_checks({})
    assert empty == {"conditions": [], "judges": [], "aggregates": {}, "check_score": None}  # nothing passed


def test_the_summary_means_are_split_the_same_way():
    split = summary_means({"include": 0.5, "checks_score": 0.7, "groundedness": 0.9, "score5": 4.0,
                           "agent/input_token_count": 100.0}, "score5,groundedness")
    assert split == {"checks": {"include": 0.5}, "judges": {"groundedness": 0.9, "score5": 4.0}, "check_score": 0.7}


def test_judge_counts_tolerate_their_absence_and_odd_values():
    assert judges_line({}) == [] and judges_line({"judges": None}) == []
    rows = judges_line({"judges": {"score5": {"judged": 0, "failed": 6, "reason": "reply was not JSON"},
                                   "groundedness": {"judged": 6, "failed": 0, "reason": None}, "odd": "x"}})
    assert rows == [{"name": "score5", "judged": 0, "failed": 6, "skipped": 0, "asked": 6,
                     "reason": "reply was not JSON", "bad": True},
                    {"name": "groundedness", "judged": 6, "failed": 0, "skipped": 0, "asked": 6, "reason": None,
                     "bad": False}]
    assert judges_line({"judges": {"score5": {"judged": 4, "failed": 0, "skipped": 2, "reason": None}}}) == [
        {"name": "score5", "judged": 4, "failed": 0, "skipped": 2, "asked": 6, "reason": None, "bad": False}]


CHINESE = ("question_type,question_text,ground_truth\r\n"
           "FACTUAL,红烧肉要炖多久？,小火炖四十分钟，再大火收汁\r\n"
           "INFERENTIAL,为什么要先炒糖色？,上色，增加焦香味\r\n"
           "FACTUAL,鱼香肉丝为什么没有鱼？,鱼香是一种调味方法，用泡辣椒、葱姜蒜、糖和醋调出来\r\n")


@pytest.mark.parametrize("codec", ["gbk", "gb18030", "utf-16"])
def test_a_csv_in_another_encoding_is_detected_and_converted(codec):
    decoded = decode_text(CHINESE.encode(codec), "q.csv")
    assert decoded.text == CHINESE and decoded.converted
    assert codecs.lookup(decoded.encoding).name in {"gb18030", "utf-16", "gbk"}


def test_utf8_is_read_as_it_is_with_or_without_its_mark():
    for data in (CHINESE.encode("utf-8"), CHINESE.encode("utf-8-sig")):
        assert decode_text(data) == decode_text(CHINESE.encode("utf-8"))
        assert not decode_text(data).converted and decode_text(data).text == CHINESE


@pytest.mark.parametrize("data", [
    "question_text\n宫保鸡丁放什么辣椒？\n".encode("gbk"),  # one short line: GBK, Korean and Japanese read as well
    bytes(range(256)) * 4,  # not text
])
def test_an_encoding_that_cannot_be_told_for_sure_is_refused(data):
    with pytest.raises(EncodingError, match=r'save it as "CSV UTF-8" and import it again'):
        decode_text(data, "q.csv")


def test_the_decode_route_converts_or_refuses_and_stores_nothing(api):
    headers = {"Content-Type": "application/octet-stream"}
    answer = api.request("POST", "/api/v1/question-sets/decode?name=q.csv", content=CHINESE.encode("gbk"),
                         headers=headers, expect=200).json()
    assert answer["text"] == CHINESE and answer["converted"] and answer["encoding"] == "gb18030"
    refused = api.request("POST", "/api/v1/question-sets/decode?name=%3Cb%3Eq.csv", headers=headers,
                          content="question_text\n宫保鸡丁放什么辣椒？\n".encode("gbk"), expect=400).json()
    assert refused["detail"].startswith("<b>q.csv is not UTF-8, and its encoding cannot be told for sure")
    assert api.request("POST", "/api/v1/question-sets/decode", content=b"", headers=headers,
                       expect=400).json() == {"detail": "the file is empty"}
    api.request("POST", "/api/v1/question-sets/decode?name=" + "x" * 300, content=b"a", headers=headers, expect=422)
    assert api.client.post("/api/v1/question-sets/decode", content=b"a").status_code == 403  # same-origin token
    assert api.get("/api/v1/question-sets")["total"] == 0


def test_the_page_shows_each_judge_s_counts_and_first_reason(api, monkeypatch):
    from ragretrieval.server.store import summary

    from .conftest import new_evaluation, new_set

    question_set = new_set(api, 2)
    eval_id = new_evaluation(api, question_set["id"], "http://127.0.0.1:9/x", judge="score5")["id"]
    plain = re.sub(r"<[^>]+>", "", api.client.get(f"/evaluations/{eval_id}").text)
    assert "0 of 2 answered" in plain and "judged" not in plain  # summary.judges absent: no line, no error
    real = summary.summarize
    monkeypatch.setattr(summary, "summarize", lambda conn, eid: {**real(conn, eid), "judges": {
        "score5": {"judged": 0, "failed": 6, "reason": "reply was not JSON at /srv/secret/x.json"}}})
    summary.summaries.clear()
    try:
        plain = re.sub(r"<[^>]+>", "", api.client.get(f"/evaluations/{eval_id}/live").text)
    finally:
        summary.summaries.clear()
    assert "score5: 0 of 6 judged, 6 failed: reply was not JSON at …/x.json" in plain
