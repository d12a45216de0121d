"""build-dataset --generator llm against a real chat-completions server on 127.0.0.1, one fixture per behaviour."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.testing.chat_server import ChatServer, Reply, document_in

from .conftest import API_KEY, recipe_questions

DOCS = {
    "good.md": "# 番茄炒蛋的做法\n\n- 番茄 2 个，切成小块\n- 鸡蛋 3 个，打散加盐\n\n先炒鸡蛋，盛出后再炒番茄，最后合在一起翻炒。\n",
    "fenced.md": "# 清炒时蔬\n\n- 青菜 300 克，洗净沥干\n- 大蒜两瓣拍碎\n\n热锅冷油下蒜末，再下青菜大火快炒一分钟。\n",
    "repaired.md": "# 凉拌黄瓜\n\n- 黄瓜 2 根拍碎切段\n- 香醋 15 毫升\n\n拌匀后冷藏十分钟再吃更爽口。\n",
    "hopeless.md": "# 蛋花汤\n\n- 鸡蛋 1 个打散\n- 清水 500 毫升烧开\n\n水开后慢慢淋入蛋液，边淋边搅。\n",
    "invented.md": "# 蒸鸡蛋羹\n\n- 鸡蛋 2 个\n- 温水 200 毫升\n\n蛋液过筛后盖上盘子中火蒸十分钟。\n",
    "ratelimited.md": "# 葱油拌面\n\n- 细面 200 克\n- 小葱一把切段\n\n葱段小火慢炸到焦黄，趁热浇在面上。\n",
    "slow.md": "# 白灼虾\n\n- 鲜虾 500 克剪去虾须\n- 姜片三片\n\n水开后放姜片和虾，虾身变红卷曲即可捞出。\n",
}


def responder(request: dict) -> Reply:
    document = document_in(request)
    questions = recipe_questions(document)
    repair = len(request["messages"]) > 1
    if "番茄" in document:  # also a question that only names its document, and a near-duplicate
        questions += [{"question_type": "FACTUAL", "question_text": "番茄炒蛋怎么做？", "ground_truth": "见全文",
                       "evidence": ["先炒鸡蛋"]},
                      dict(questions[0], question_text=questions[0]["question_text"] + "呢")]
        return Reply(json.dumps({"questions": questions}, ensure_ascii=False))
    if "青菜" in document:
        return Reply("好的，以下是问题：\n```json\n" + json.dumps(questions, ensure_ascii=False) + "\n```\n")
    if "黄瓜" in document and not repair:
        return Reply('[{"question_type": "FACTUAL", "question_text": "黄瓜要冷藏多久"')
    if "黄瓜" in document:
        return Reply(json.dumps(questions, ensure_ascii=False))
    if "蛋花" in document:
        return Reply("对不起，我不能输出 JSON。")
    if "鸡蛋羹" in document:
        questions[1]["evidence"] = ["蛋液要用大火蒸二十分钟"]
        return Reply(json.dumps(questions, ensure_ascii=False))
    if "葱油" in document and responder.rate_limited.setdefault(document, 0) < 1:
        responder.rate_limited[document] += 1
        return Reply(status=429, headers={"Retry-After": "0"})
    if "白灼虾" in document and responder.slowed.setdefault(document, 0) < 1:
        responder.slowed[document] += 1
        return Reply(json.dumps(questions, ensure_ascii=False), delay=3.0)
    return Reply(json.dumps(questions, ensure_ascii=False))


@pytest.fixture
def corpus(tmp_path) -> Path:
    folder = tmp_path / "dishes"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def build(server, corpus, out, *extra):
    args = ["dataset", "build", str(corpus), "--out", str(out), "--generator", "llm", "--base-url", server.url,
            "--model", "fake-model", "--per-doc", "2", "--timeout", "1", "--max-retries", "2", "--no-progress",
            "--concurrency", "2", *extra]
    return CliRunner().invoke(main, args)


def by_document(server) -> dict[str, int]:
    counts: dict[str, int] = {}
    for request in server.requests:
        title = document_in(request).splitlines()[0]
        counts[title] = counts.get(title, 0) + 1
    return counts


def test_every_fixture_behaviour(tmp_path, corpus, llm_env):
    responder.rate_limited, responder.slowed = {}, {}
    out = tmp_path / "dataset"
    with ChatServer(responder) as server:
        result = build(server, corpus, out)
    assert result.exit_code == 0, result.output + result.stderr
    dataset = load_dataset(out)
    texts = {d.id: d.text for d in dataset.documents}
    by_doc: dict[str, list] = {}
    for question in dataset.questions:
        assert question.provenance.generator == "llm"
        assert question.provenance.model == "fake-model"
        assert question.provenance.prompt_hash.startswith("sha256:")
        (rel,) = question.relevant
        by_doc.setdefault(rel.doc_id, []).append(question)
        evidence = question.metadata["evidence"]
        located = "".join(texts[rel.doc_id][s:e] for s, e in rel.spans)
        assert rel.spans and evidence[-1].replace(" ", "") in located.replace(" ", "")
    # good (+ names-only and near-duplicate dropped), fenced, repaired, rate-limited, slow: 2 each;
    # invented: 1 (its second question quotes text not in the document); hopeless: none.
    assert {d: len(q) for d, q in by_doc.items()} == {"good.md": 2, "fenced.md": 2, "repaired.md": 2,
                                                      "invented.md": 1, "ratelimited.md": 2, "slow.md": 2}
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    counts = manifest["builder"]["llm"]["counts"]
    assert counts["evidence not found"] == 1
    assert counts["names its document only"] == 1
    assert counts["near duplicate"] == 1
    assert counts["failed documents"] == 1 and counts["kept"] == 11
    assert manifest["builder"]["llm"]["failed_documents"][0]["doc_id"] == "hopeless.md"
    assert "malformed JSON after one repair request" in manifest["builder"]["llm"]["failed_documents"][0]["reason"]
    assert "warning: no questions for hopeless.md" in result.stderr
    requests = by_document(server)
    assert requests == {"# 番茄炒蛋的做法": 1, "# 清炒时蔬": 1, "# 凉拌黄瓜": 2, "# 蛋花汤": 2, "# 蒸鸡蛋羹": 1,
                        "# 葱油拌面": 2, "# 白灼虾": 2}
    assert set(server.authorizations) == {f"Bearer {API_KEY}"}
    assert not (out / ".llm-questions.journal.jsonl").exists()


def test_identical_requests_come_from_the_cache(tmp_path, corpus, llm_env):
    responder.rate_limited, responder.slowed = {}, {}
    with ChatServer(responder) as server:
        assert build(server, corpus, tmp_path / "a").exit_code == 0
        first = len(server.requests)
        again = build(server, corpus, tmp_path / "b")
    assert again.exit_code == 0, again.stderr
    # malformed answers are never served from the cache: the document that never answers in JSON is asked again
    # (2 requests), and so is the first answer of the one that needed a repair (its repair is served from the cache)
    assert len(server.requests) == first + 3
    assert "3 requests, 6 from cache" in again.stderr, again.stderr
    assert (tmp_path / "a" / "questions.jsonl").read_text() == (tmp_path / "b" / "questions.jsonl").read_text()


def test_the_api_key_is_never_written(tmp_path, corpus, llm_env):
    responder.rate_limited, responder.slowed = {}, {}
    out = tmp_path / "dataset"
    with ChatServer(responder) as server:
        result = build(server, corpus, out)
        server.fail_after = 0
        failed = build(server, corpus, tmp_path / "other", "--per-doc", "3")  # new requests
    assert result.exit_code == 0
    assert failed.exit_code != 0 and "HTTP 500" in failed.stderr
    written = [p for folder in (out, tmp_path / "other", llm_env) for p in folder.rglob("*") if p.is_file()]
    assert any(p.name == "llm.sqlite" for p in written)
    for path in written:
        assert API_KEY.encode() not in path.read_bytes(), path
    assert API_KEY not in result.output + result.stderr + failed.output + failed.stderr


def test_no_usable_question_is_an_error_not_an_empty_dataset(tmp_path, corpus, llm_env):
    with ChatServer(lambda request: Reply('{"questions": []}')) as server:
        result = build(server, corpus, tmp_path / "dataset")
    assert result.exit_code != 0
    assert "the model's answers gave no usable question" in result.stderr
    assert "llm: 7 documents, 0 questions generated, 0 kept" in result.stderr
    assert not (tmp_path / "dataset" / "manifest.json").exists()
