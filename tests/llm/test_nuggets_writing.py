"""``ragretrieval questions nuggets DATASET`` against a chat server on 127.0.0.1: nuggets from the reference answer and
the relevant passages, hand-written ones kept, nothing asked twice, a killed run resumed from its journal, malformed
replies repaired or counted, and every bad option refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.nuggets import QuestionNuggets, read_nuggets, write_nuggets
from ragretrieval.llm.nuggets import JOURNAL_NAME
from ragretrieval.testing.chat_server import TEST_API_KEY, ChatServer, Reply

QUESTIONS = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "answer_questions.jsonl"
BLOCK = re.compile(r"<<<\n(.*?)\n>>>", re.S)


def write_from_the_reference(request: dict) -> Reply:
    """Nuggets split from the reference answer at commas and full stops, the first vital; a repeat of the first;
    none when the reference says to refuse."""
    question, truth, passages = BLOCK.findall(request["messages"][0]["content"])
    if "拒答" in truth:
        return Reply('{"nuggets": []}')
    facts = [part.strip() for part in re.split(r"[，。]", truth) if part.strip()]
    nuggets = [{"text": fact, "importance": "vital" if i == 0 else "okay"} for i, fact in enumerate(facts)]
    return Reply(json.dumps({"nuggets": [*nuggets, nuggets[0]]}, ensure_ascii=False))


@pytest.fixture
def writer():
    with ChatServer(write_from_the_reference) as server:
        yield server


def invoke(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


def write(server, dataset, out, *extra, code=0, questions=QUESTIONS):
    return invoke("questions", "nuggets", dataset, "--questions", questions, "--out", out, "--nuggets-model", "m",
                  "--nuggets-base-url", server.url, "--nuggets-max-retries", "0", "--no-progress", *extra, code=code)


def test_nuggets_are_written_from_the_reference_and_the_passages(demo_dataset, writer, llm_env, tmp_path):
    out = tmp_path / "nuggets.jsonl"
    done = write(writer, demo_dataset, out)
    assert writer.count() == 5 and "5 questions with nuggets" in done.output and "5 written" in done.output
    records = read_nuggets(out)
    assert list(records) == ["a-luyu", "a-jidan", "a-tang", "a-gongbao", "a-none"]
    luyu = records["a-luyu"]
    assert [(n.text, n.importance) for n in luyu.nuggets] == [("大火蒸 8 分钟", "vital"), ("关火后再焖 2 分钟", "okay")]
    assert luyu.written_by == "llm" and luyu.model == "m" and luyu.prompt_hash.startswith("sha256:")
    assert records["a-none"].nuggets == []  # the model wrote none: not applicable, never 0 or 1
    prompt = next(r["messages"][0]["content"] for r in writer.requests if "鲈鱼要大火" in r["messages"][0]["content"])
    assert "拆成若干" in prompt and BLOCK.findall(prompt)[2].startswith("[0] # 清蒸鲈鱼")  # zh prompt, the recipe
    assert "repeated" in done.output  # the repeat of the first nugget was dropped
    assert TEST_API_KEY not in out.read_text(encoding="utf-8") + done.output
    assert not (tmp_path / JOURNAL_NAME).exists()

    again = write(writer, demo_dataset, out)
    assert writer.count() == 5 and "5 kept" in again.output  # nothing asked: every question has nuggets


def test_hand_written_nuggets_are_kept_unless_forced(demo_dataset, writer, llm_env, tmp_path):
    out = tmp_path / "nuggets.jsonl"
    write(writer, demo_dataset, out)
    records = read_nuggets(out)
    mine = QuestionNuggets(question_id="a-luyu", nuggets=[{"text": "蒸 8 分钟", "importance": "vital"}])
    kept = [mine] + [r for qid, r in records.items() if qid not in ("a-luyu", "a-tang")] + [
        QuestionNuggets(question_id="not-in-this-set", nuggets=[])]
    write_nuggets(out, kept)
    done = write(writer, demo_dataset, out)
    assert writer.count() == 5  # a-tang's request is in the answer cache
    assert "1 kept by hand" in done.output and "1 written" in done.output
    now = read_nuggets(out)
    assert now["a-luyu"] == mine and "a-tang" in now and "not-in-this-set" in now  # others' lines stay
    forced = write(writer, demo_dataset, out, "--force")
    assert "5 written" in forced.output and writer.count() == 5
    assert read_nuggets(out)["a-luyu"].written_by == "llm"


def test_a_killed_run_resumes_from_its_journal(demo_dataset, writer, llm_env, tmp_path):
    out = tmp_path / "nuggets.jsonl"
    writer.fail_after = 2
    failed = write(writer, demo_dataset, out, "--nuggets-concurrency", "1", code=1)
    assert "2 of 5 questions' nuggets are saved in" in failed.output and "run the same command again" in failed.output
    assert not out.exists() and (tmp_path / JOURNAL_NAME).is_file()
    writer.fail_after = None
    resumed = write(writer, demo_dataset, out, "--nuggets-concurrency", "1")
    assert writer.count() == 3 + 3  # two answered, one refused, then the three left
    assert "5 questions with nuggets" in resumed.output and not (tmp_path / JOURNAL_NAME).exists()


def test_malformed_replies_get_one_repair_then_count_as_failures(demo_dataset, llm_env, tmp_path):
    def sloppy(request):
        content = request["messages"][0]["content"]
        if "鲈鱼" in content or "溏心蛋" in content:
            return Reply('{"nuggets": [{"text": "x", "importance": "essential"}]}')
        return write_from_the_reference(request)

    out = tmp_path / "nuggets.jsonl"
    with ChatServer(sloppy) as server:
        done = write(server, demo_dataset, out)
        assert server.count() == 3 + 2 * 2  # the two sloppy questions: a request and a repair request each
        assert "warning: no nuggets for a-luyu: malformed JSON after one repair request" in done.output
        assert set(read_nuggets(out)) == {"a-tang", "a-gongbao", "a-none"}
        before = out.read_bytes()
        again = write(server, demo_dataset, out, code=1)  # asked again (not cached as good): failing, all of them
        assert server.count() == 7 + 4 and "2 of 2 questions got no usable answer" in again.output
        assert out.read_bytes() == before  # nothing the user had is lost

    with ChatServer(lambda request: Reply("I would rather not.")) as server:
        out.unlink()
        refused = write(server, demo_dataset, out, code=1)
    assert "5 of 5 questions got no usable answer" in refused.output and not out.exists()


def test_at_most_max_nuggets_vital_first(demo_dataset, llm_env, tmp_path):
    def many(request):
        return Reply(json.dumps({"nuggets": [{"text": "a", "importance": "okay"}, {"text": "b", "importance": "okay"},
                                             {"text": "c", "importance": "vital"}]}))

    with ChatServer(many) as server:
        done = write(server, demo_dataset, tmp_path / "n.jsonl", "--max-nuggets", "2")
        assert '最多 2 个要点' in server.requests[0]["messages"][0]["content"]
    assert [n.text for n in read_nuggets(tmp_path / "n.jsonl")["a-jidan"].nuggets] == ["a", "c"]
    assert "5 beyond max_nuggets" in done.output


def test_a_changed_question_is_reported_and_one_without_sources_is_left_out(demo_dataset, writer, llm_env, tmp_path):
    out = tmp_path / "nuggets.jsonl"
    write(writer, demo_dataset, out)
    changed = tmp_path / "questions.jsonl"
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0]) | {"ground_truth": "大火蒸 10 分钟。"}
    checks_only = {"id": "a-checks", "text": "要放盐吗？", "provenance": {"generator": "hand"},
                   "expect": {"include": ["盐"]}}
    changed.write_text("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:],
                                  json.dumps(checks_only, ensure_ascii=False)]) + "\n", encoding="utf-8")
    done = write(writer, demo_dataset, out, questions=changed)
    assert "1 question(s) changed since a model wrote their nuggets (a-luyu)" in done.output
    assert "1 no reference answer and no relevant documents" in done.output and writer.count() == 5
    assert "a-checks" not in read_nuggets(out)


@pytest.mark.parametrize("option, value, code, message", [
    ("--max-nuggets", "0", 2, "1<=x<=100"),
    ("--max-nuggets", "101", 2, "1<=x<=100"),
    ("--max-nuggets", "many", 2, "'many' is not a valid integer"),
    ("--passage-chars", "5", 2, "100<=x<=1000000"),
    ("--nuggets-concurrency", "0", 2, "1<=x<=256"),  # every --concurrency is bounded when read (cli/llm_options.py)
    ("--nuggets-concurrency", "-3", 2, "1<=x<=256"),
    ("--nuggets-language", "pl", 2, "'pl' is not one of"),
])
def test_bad_options_are_refused_before_any_request(option, value, code, message, demo_dataset, writer, llm_env,
                                                    tmp_path):
    refused = write(writer, demo_dataset, tmp_path / "n.jsonl", option, value, code=code)
    assert message in refused.output and writer.count() == 0 and not (tmp_path / "n.jsonl").exists()


def test_a_bad_prompt_file_a_directory_and_a_secret_url(demo_dataset, writer, llm_env, tmp_path):
    prompt = tmp_path / "prompt.md"
    prompt.write_text("List facts of $question and $secret", encoding="utf-8")
    refused = write(writer, demo_dataset, tmp_path / "n.jsonl", "--nuggets-prompt", prompt, code=1)
    assert "unknown placeholder $secret" in refused.output
    prompt.write_text("Facts of $ground_truth only", encoding="utf-8")
    assert "must contain $question" in write(writer, demo_dataset, tmp_path / "n.jsonl", "--nuggets-prompt", prompt,
                                             code=1).output
    assert "is a directory" in write(writer, demo_dataset, tmp_path, code=2).output
    secret_url = writer.url.replace("http://", "http://user:hunter2secret@")
    done = invoke("questions", "nuggets", demo_dataset, "--questions", QUESTIONS, "--out", tmp_path / "n.jsonl",
                  "--nuggets-base-url", secret_url, "--nuggets-model", "m", "--no-progress")
    assert "hunter2secret" not in done.output + (tmp_path / "n.jsonl").read_text(encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "a-luyu", "nuggets": [{"text": "x"}]}\n', encoding="utf-8")
    broken = write(writer, demo_dataset, bad, code=1)
    assert "bad.jsonl:1: field 'nuggets.0.importance': Field required" in broken.output
