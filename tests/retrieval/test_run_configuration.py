"""What the new settings do to a run's configuration and its key: nothing while unset (keys made before them stay
valid), speed-only embedding settings never, vector-changing ones always; grids carry them to their cells."""

from __future__ import annotations

from ragretrieval.data.dataset import load_dataset
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.retrieval.registry import spec_from_config
from ragretrieval.runs.identity import config_key
from ragretrieval.runs.sweep import plan
from ragretrieval.runs.sweep_grid import read_grid

# keys computed by ragretrieval 0.2.0 (before embed and rerank existed) for the same configurations and fingerprints
KEYS_BEFORE = {"dense default": "886f38796fcc033c7868d527a8c0b573", "bm25 500": "af1cc8e6ba62c9c30f84f97aea49d353"}


def key(config: EvalConfig, labels: str | None = "labels-fp") -> str:
    return config_key(config, "corpus-fp", "questions-fp", labels)


def test_configurations_without_the_new_settings_keep_their_keys():
    assert key(EvalConfig()) == KEYS_BEFORE["dense default"]
    assert key(EvalConfig(retriever="bm25", chunk_size=500), None) == KEYS_BEFORE["bm25 500"]


def test_speed_only_embedding_settings_leave_the_key_and_vector_settings_change_it():
    assert key(EvalConfig(embed={"batch_size": 8, "concurrency": 2, "price": 0.1})) == KEYS_BEFORE["dense default"]
    changed = {key(EvalConfig(embed=e)) for e in ({"query_prefix": "q: "}, {"dimensions": 256}, {"input_type": True},
                                                  {"base_url": "http://127.0.0.1:1/v1"})}
    assert len(changed) == 4 and KEYS_BEFORE["dense default"] not in changed
    assert key(EvalConfig(rerank={"name": "embed:e5-small-q4"})) != KEYS_BEFORE["dense default"]


def test_a_reranked_configuration_is_a_spec_whose_child_is_the_first_stage():
    config = EvalConfig(retriever="hybrid", model="hashing-64", embed={"query_prefix": "q: "},
                        rerank={"name": "embed:e5-small-q4", "depth": 30})
    assert config.rerank == {"name": "embed:e5-small-q4", "depth": 30}
    spec = spec_from_config(config)
    assert spec.name == "rerank" and spec.options["embed"] == {"query_prefix": "q: "}
    (hybrid,) = spec.children
    assert [child.name for child in hybrid.children] == ["bm25", "dense"]
    assert hybrid.children[1].options["embed"] == {"query_prefix": "q: "}
    assert spec.label() == "rerank(hybrid(bm25 + dense(hashing-64)))"


def test_a_grid_file_carries_embedding_settings_and_fusion_to_its_cells(demo_dataset, tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"dataset: {demo_dataset}\nretrievers: [bm25, dense, hybrid]\nmodels: [hashing-64]\n"
                    "embed: {query_prefix: '问：', batch_size: 16}\nfusion: {fusion: weighted, alpha: 0.3}\n",
                    encoding="utf-8")
    cells = {c.config.retriever: c.config for c in plan(read_grid(grid), load_dataset(demo_dataset))}
    assert cells["bm25"].embed is None and cells["bm25"].retriever_options == {}
    assert cells["dense"].embed == {"query_prefix": "问：", "batch_size": 16}
    assert cells["hybrid"].retriever_options == {"fusion": "weighted", "alpha": 0.3}
