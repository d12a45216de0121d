"""The face's names are pinned: a name added to or dropped from ``rr.__all__`` by accident fails here (change the
list below with the change, and say it in CHANGELOG.md). Settings built directly raise `rr.SettingsError`."""

from __future__ import annotations

import pytest

import ragretrieval as rr

FACE = ["build_dataset", "load_dataset", "evaluate", "answer", "judge_answers", "sweep", "score", "compare",
        "load_run", "EvalConfig", "EvalReport", "AnswerSettings", "CompareSettings", "AnswerReport", "Comparison",
        "ScoreResult", "Dataset", "SettingsError",
        "RagretrievalError"]


def test_the_face_exports_exactly_these_names():
    assert rr.__all__ == FACE
    for name in FACE:
        assert getattr(rr, name) is not None


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'evaluat'"):
        rr.evaluat  # noqa: B018


def test_the_package_says_it_is_typed():
    from importlib.resources import files

    assert files("ragretrieval").joinpath("py.typed").is_file()


@pytest.mark.parametrize(("model", "values", "field"), [
    ("EvalConfig", {"chunk_size": 10, "chunk_overlap": 20}, "chunk_overlap"),
    ("EvalConfig", {"chunk_size": True}, "chunk_size"),
    ("EvalConfig", {"ks": [0]}, "ks"),
    ("EvalConfig", {"retriever": None}, "retriever"),
    ("AnswerSettings", {"context_k": -1}, "context_k"),
    ("AnswerSettings", {"generator": ""}, "generator"),
])
def test_settings_built_directly_raise_settings_error_naming_the_field(model, values, field):
    with pytest.raises(rr.SettingsError) as raised:
        getattr(rr, model)(**values)
    assert isinstance(raised.value, ValueError)  # the README's promise: a ValueError subclass
    assert raised.value.fields and raised.value.fields[0].split(".")[0] == field, raised.value.fields
    assert field in str(raised.value)
