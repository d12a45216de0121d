"""The embedding precision and batch size reach a web evaluation through `options.embed` (the form's *Embedding
precision*), validated by the engine's `EmbedSettings`: a bad value is a 422 naming the field, before any work."""

from __future__ import annotations

import pytest

from ragretrieval.embedders.settings import DTYPES, EmbedSettings
from ragretrieval.server.views import again_settings, form_defaults

from .conftest import CORPUS, Api


@pytest.fixture
def api(client_on, sqlite_url, datasets):
    return Api(client_on(sqlite_url))


def create(api, embed, expect):
    opened = api.post("/api/v1/question-sets/from-dataset", {"dataset": CORPUS}, expect=201)
    return api.post("/api/v1/evaluations", {
        "name": "precision", "kind": "retrieval", "dataset": CORPUS, "question_set_id": opened["id"],
        "retriever": "dense", "options": {"embed": embed}}, expect=expect)


def test_the_form_offers_the_engine_s_choices_and_default():
    defaults = form_defaults()
    assert defaults["embed_dtypes"] == DTYPES
    assert defaults["embed_dtype"] == EmbedSettings.model_fields["dtype"].default == "auto"


def test_a_chosen_precision_is_stored_and_shown_again(api):
    created = create(api, {"dtype": "bfloat16", "query_prefix": "q: "}, 201)
    assert created["options"]["embed"] == {"dtype": "bfloat16", "query_prefix": "q: "}


@pytest.mark.parametrize("embed, field", [
    ({"dtype": "float8"}, "dtype"), ({"dtype": None}, "dtype"), ({"dtype": 16}, "dtype"), ({"dtype": ""}, "dtype"),
    ({"batch_size": -1}, "batch_size"), ({"batch_size": 0}, "batch_size"), ({"batch_size": 10**9}, "batch_size"),
    ({"batch_size": True}, "batch_size"), ({"batch_size": "/etc/passwd"}, "batch_size"),
])
def test_a_bad_value_is_refused_naming_the_field(api, embed, field):
    refused = create(api, embed, 422)
    assert field in str(refused)


class _Stored:
    """What `again_settings` reads of a stored evaluation."""

    def __init__(self, options):
        self.kind, self.options, self.retriever, self.name = "retrieval", options, "dense", "again"
        self.generator = self.base_url = self.judge_model = self.judge_base_url = self.judge = None


def test_run_again_shows_the_precision_in_its_field_and_keeps_the_other_embedding_settings():
    again = again_settings(_Stored({"embed": {"dtype": "float16", "query_prefix": "q: "}}), form_defaults())
    assert again["settings"]["fields"]["embed_dtype"] == "float16"
    assert again["extra_options"] == {"embed": {"query_prefix": "q: "}}
    plain = again_settings(_Stored({"embed": {"dtype": "bfloat16"}}), form_defaults())
    assert "embed" not in plain["extra_options"]
