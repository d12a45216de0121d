"""`ragretrieval stores`, a store that is not installed, and `eval --index-dir/--rebuild` end to end."""

import json

import pytest
from click.testing import CliRunner

from ragretrieval import stores
from ragretrieval.cli import main


@pytest.fixture(autouse=True)
def in_tmp_folder(tmp_path, monkeypatch):
    """eval keeps a runs history in ./.ragretrieval: keep it out of the working tree."""
    monkeypatch.chdir(tmp_path)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def tiny_dataset(tmp_path):
    """Three recipes as a dataset; `edit()` changes one document and rebuilds the dataset."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    texts = {"番茄炒蛋.md": "# 番茄炒蛋\n\n番茄切块，鸡蛋打散，先炒蛋后炒番茄。\n",
             "红烧肉.md": "# 红烧肉\n\n五花肉切块焯水，冰糖炒色，小火炖一小时。\n",
             "拍黄瓜.md": "# 拍黄瓜\n\n黄瓜拍碎，加蒜末、醋和香油拌匀。\n"}
    for name, text in texts.items():
        (corpus / name).write_text(text, encoding="utf-8")

    def build():
        result = run("dataset", "build", corpus, "--out", tmp_path / "dataset", "--force")
        assert result.exit_code == 0, result.output
        return tmp_path / "dataset"

    def edit():
        (corpus / "拍黄瓜.md").write_text("# 拍黄瓜\n\n黄瓜拍碎，加盐腌十分钟，倒掉水再拌。\n", encoding="utf-8")
        return build()

    build.edit = edit
    return build


def test_stores_lists_built_in_and_installed_adapters():
    result = run("stores")
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines()[1:] if line.strip()}
    assert "built in" in lines["numpy"] and "exact" in lines["numpy"]
    assert "kind=hnsw" in lines["faiss"]
    for name, package in stores.ADAPTER_PACKAGES.items():
        if name in stores.available_stores():
            assert package in lines[name]


def test_a_store_not_installed_names_its_package(tiny_dataset, monkeypatch):
    monkeypatch.setitem(stores.ADAPTER_PACKAGES, "weaviate", "ragretrieval-weaviate")
    result = run("eval", "--dataset", tiny_dataset(), "--store", "weaviate", "--no-progress")
    assert result.exit_code == 2
    assert "store 'weaviate' is not installed; pip install ragretrieval-weaviate" in result.output


def test_an_unknown_store_lists_what_exists(tiny_dataset):
    result = run("eval", "--dataset", tiny_dataset(), "--store", "no-such-store", "--no-progress")
    assert result.exit_code == 2
    assert "unknown store 'no-such-store'; installed: " in result.output and "numpy" in result.output
    assert "milvus (ragretrieval-milvus)" in result.output


@pytest.mark.model  # the dense retriever embeds the tiny dataset with the default model
def test_index_dir_persists_reloads_and_refuses_another_corpus(tiny_dataset, tmp_path):
    index = tmp_path / "index"
    dataset = tiny_dataset()
    first = run("eval", "--dataset", dataset, "--store", "numpy", "--index-dir", index, "--no-progress",
                "--out", tmp_path / "first.json")
    assert first.exit_code == 0, first.output
    saved = json.loads((index / "store.json").read_text(encoding="utf-8"))
    assert saved["store"] == "numpy" and saved["fingerprint"].startswith("sha256:") and len(saved["ids"]) == 3
    second = run("eval", "--dataset", dataset, "--store", "numpy", "--index-dir", index, "--no-progress",
                 "--out", tmp_path / "second.json")
    assert second.exit_code == 0, second.output
    assert f"index loaded from {index}" in second.output
    means = [json.loads((tmp_path / f"{n}.json").read_text(encoding="utf-8"))["means"] for n in ("first", "second")]
    assert means[0] == means[1]

    other = tiny_dataset.edit()
    refused = run("eval", "--dataset", other, "--store", "numpy", "--index-dir", index, "--no-progress")
    assert refused.exit_code == 1
    assert "index was built from a different corpus, chunking or model" in refused.output
    assert "--rebuild" in refused.output
    wrong_store = run("eval", "--dataset", dataset, "--store", "faiss", "--index-dir", index, "--no-progress")
    assert wrong_store.exit_code == 1 and "holds an index of store 'numpy', not 'faiss'" in wrong_store.output

    rebuilt = run("eval", "--dataset", other, "--store", "numpy", "--index-dir", index, "--rebuild", "--no-progress")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "index loaded from" not in rebuilt.output
    assert json.loads((index / "store.json").read_text(encoding="utf-8"))["fingerprint"] != saved["fingerprint"]


def test_index_dir_needs_the_dense_retriever(tiny_dataset, tmp_path):
    result = run("eval", "--dataset", tiny_dataset(), "--retriever", "bm25", "--index-dir", tmp_path / "i")
    assert result.exit_code == 1
    assert "an index folder keeps a dense index; the bm25 retriever has none" in result.output
