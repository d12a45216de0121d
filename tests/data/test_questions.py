"""Questions from file names: the template, its placeholders, and one question per distinct text."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.corpus import Document, load_corpus
from ragretrieval.data.dataset import QuestionRecord, read_jsonl
from ragretrieval.data.filename_questions import DEFAULT_TEMPLATE, TemplateError, filename_questions

DOCS = [
    Document("meat_dish/红烧肉/简易红烧肉.md", "简易红烧肉的做法", "..."),
    Document("soup/紫菜蛋花汤.md", "紫菜蛋花汤的做法", "..."),
    Document("soup/紫菜蛋花汤/紫菜蛋花汤.md", "紫菜蛋花汤（勾芡版）", "..."),
    Document("早餐.md", "早餐", "..."),
]


def test_default_template_asks_how_to_make_the_file_stem():
    assert DEFAULT_TEMPLATE == "如何做{name}？"
    questions = filename_questions(DOCS)
    assert [q.text for q in questions] == ["如何做简易红烧肉？", "如何做紫菜蛋花汤？", "如何做早餐？"]
    assert all(q.provenance.generator == "filename" and q.provenance.template == "如何做{name}？" for q in questions)


def test_same_question_text_makes_one_question_with_every_document_relevant():
    questions = filename_questions(DOCS)
    soup = next(q for q in questions if q.text == "如何做紫菜蛋花汤？")
    assert [(r.doc_id, r.grade, r.spans) for r in soup.relevant] == [
        ("soup/紫菜蛋花汤.md", 1, []),
        ("soup/紫菜蛋花汤/紫菜蛋花汤.md", 1, []),
    ]


def test_question_ids_are_stable_and_distinct():
    first, again = filename_questions(DOCS), filename_questions(list(DOCS))
    assert [q.id for q in first] == [q.id for q in again]
    assert len({q.id for q in first}) == len(first)
    assert all(q.id.startswith("q-") and len(q.id) == 14 for q in first)


def test_template_placeholders_name_title_folder():
    questions = filename_questions(DOCS, "{folder}里的{name}（{title}）怎么做")
    assert [q.text for q in questions] == [
        "红烧肉里的简易红烧肉（简易红烧肉的做法）怎么做",
        "soup里的紫菜蛋花汤（紫菜蛋花汤的做法）怎么做",
        "紫菜蛋花汤里的紫菜蛋花汤（紫菜蛋花汤（勾芡版））怎么做",
        "里的早餐（早餐）怎么做",  # a file at the top level has an empty folder
    ]
    assert questions[0].provenance.template == "{folder}里的{name}（{title}）怎么做"


@pytest.mark.parametrize("template, message", [
    ("如何做{dish}？", "unknown placeholder {dish} in template '如何做{dish}？'; known: {name}, {title}, {folder}"),
    ("如何做菜？", "template '如何做菜？' has no placeholder; known: {name}, {title}, {folder}"),
    ("如何做{name？", "template '如何做{name？' is malformed: expected '}' before end of string"),
])
def test_bad_templates_are_clear_errors(template, message):
    with pytest.raises(TemplateError) as error:
        filename_questions(DOCS, template)
    assert str(error.value) == message


def test_cli_template_option_and_its_error(demo_corpus, tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["dataset", "build", str(demo_corpus), "--out", str(tmp_path / "t"),
                                  "--template", "{name}的做法是什么？"])
    assert result.exit_code == 0, result.output
    texts = [q.text for q in read_jsonl(tmp_path / "t" / "questions.jsonl", QuestionRecord)]
    assert "宫保鸡丁的做法是什么？" in texts
    manifest = json.loads((tmp_path / "t" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["builder"]["template"] == "{name}的做法是什么？"

    result = runner.invoke(main, ["dataset", "build", str(demo_corpus), "--out", str(tmp_path / "bad"),
                                  "--template", "{菜名}"])
    assert result.exit_code == 1
    assert result.stderr == "Error: unknown placeholder {菜名} in template '{菜名}'; known: {name}, {title}, {folder}\n"
    assert not (tmp_path / "bad").exists()


def test_demo_corpus_gives_30_questions_from_31_files(demo_dataset):
    questions = read_jsonl(demo_dataset / "questions.jsonl", QuestionRecord)
    assert len(questions) == 30
    shared = [q for q in questions if len(q.relevant) > 1]
    assert [(q.text, [r.doc_id for r in q.relevant]) for q in shared] == [
        ("如何做紫菜蛋花汤？", ["soup/紫菜蛋花汤.md", "soup/紫菜蛋花汤/紫菜蛋花汤.md"]),
    ]


def test_howtocook_gives_367_questions_from_368_files(howtocook_corpus):
    corpus = load_corpus(howtocook_corpus)
    assert len(corpus.documents) == 368
    questions = filename_questions(corpus.documents)
    assert len(questions) == 367
    shared = [q for q in questions if len(q.relevant) > 1]
    assert [(q.text, [r.doc_id for r in q.relevant]) for q in shared] == [
        ("如何做陈皮排骨汤？", ["soup/陈皮排骨汤.md", "soup/陈皮排骨汤/陈皮排骨汤.md"]),
    ]
