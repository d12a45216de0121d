"""A tiny recipe corpus evaluated with BM25 at two chunk sizes: two real reports over the same questions."""

from __future__ import annotations

import pytest

from ragretrieval.data.corpus import load_corpus
from ragretrieval.data.dataset import (
    Manifest,
    Provenance,
    QuestionRecord,
    RelevantDocument,
    load_dataset,
    write_dataset,
)
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig

RECIPES = {
    "meat_dish/红烧肉.md": "# 红烧肉的做法\n\n五花肉切块，焯水。锅中放冰糖炒糖色，下肉翻炒上色，加生抽老抽和热水，小火炖一小时，大火收汁。",
    "meat_dish/红烧排骨.md": "# 红烧排骨的做法\n\n排骨斩段焯水，炒糖色后下排骨翻炒，加生抽老抽料酒和热水，炖四十分钟，收汁即可。",
    "meat_dish/回锅肉.md": "# 回锅肉\n\n五花肉整块煮熟切薄片，下锅煸出油，加郫县豆瓣酱炒香，放蒜苗翻炒出锅。",
    "meat_dish/宫保鸡丁.md": "# 宫保鸡丁\n\n鸡胸肉切丁腌制，干辣椒花椒炝锅，下鸡丁滑炒，加花生米和宫保汁翻匀。",
    "meat_dish/鱼香肉丝.md": "# 鱼香肉丝\n\n猪里脊切丝上浆，木耳胡萝卜切丝，泡椒炒香，下肉丝和配菜，淋鱼香汁。",
    "meat_dish/可乐鸡翅.md": "# 可乐鸡翅\n\n鸡翅两面划刀焯水，煎至金黄，倒入可乐没过鸡翅，加生抽，收汁。",
    "soup/西红柿鸡蛋汤.md": "# 西红柿鸡蛋汤\n\n西红柿切块炒出汁，加水烧开，淋入蛋液，撒葱花和盐。",
    "soup/紫菜蛋花汤.md": "# 紫菜蛋花汤\n\n水烧开放紫菜和虾皮，淋入蛋液，加盐和香油。",
    "soup/冬瓜排骨汤.md": "# 冬瓜排骨汤\n\n排骨焯水后加姜片炖一小时，放冬瓜块再煮二十分钟，加盐。",
    "vegetable_dish/醋溜白菜.md": "# 醋溜白菜\n\n白菜帮切片，热油爆香干辣椒，下白菜大火翻炒，烹醋加糖盐。",
    "vegetable_dish/地三鲜.md": "# 地三鲜\n\n土豆茄子青椒切块分别炸过，蒜末炒香，倒入调好的酱汁翻匀。",
    "staple/蛋炒饭.md": "# 蛋炒饭 <img src=x onerror=alert(1)>\n\n隔夜米饭打散，鸡蛋炒散盛出，米饭炒干，加鸡蛋葱花和盐翻匀。",
}


# Paraphrased questions, so BM25 at different chunk sizes gets some right and some wrong.
QUESTIONS = {
    "q-hongshao": ("五花肉炒糖色后小火炖", ["meat_dish/红烧肉.md"]),
    "q-paigu": ("排骨加料酒炖四十分钟", ["meat_dish/红烧排骨.md"]),
    "q-huiguo": ("豆瓣酱和蒜苗炒的肉片", ["meat_dish/回锅肉.md"]),
    "q-gongbao": ("花生米鸡丁", ["meat_dish/宫保鸡丁.md"]),
    "q-yuxiang": ("木耳胡萝卜肉丝", ["meat_dish/鱼香肉丝.md"]),
    "q-kele": ("用可乐做的菜", ["meat_dish/可乐鸡翅.md"]),
    "q-xihongshi": ("番茄蛋汤", ["soup/西红柿鸡蛋汤.md"]),
    "q-zicai": ("虾皮紫菜汤", ["soup/紫菜蛋花汤.md"]),
    "q-donggua": ("冬瓜炖排骨汤", ["soup/冬瓜排骨汤.md", "meat_dish/红烧排骨.md"]),
    "q-baicai": ("酸甜口的炒白菜", ["vegetable_dish/醋溜白菜.md"]),
    "q-disanxian": ("土豆茄子青椒", ["vegetable_dish/地三鲜.md"]),
    "q-chaofan": ("剩米饭怎么炒", ["staple/蛋炒饭.md"]),
    "q-tang": ("加盐的汤<script>document.title='pwned'</script>", ["soup/西红柿鸡蛋汤.md"]),
    "q-suan": ("蒜末炒香后收汁", ["meat_dish/可乐鸡翅.md"]),
}


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Embedding cache and default runs history in tmp: no test touches ./.ragretrieval."""
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RAGRETRIEVAL_RUNS_URL", str(tmp_path / "default-runs.sqlite"))


@pytest.fixture(scope="session")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    for name, text in RECIPES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    corpus = load_corpus(root)
    provenance = Provenance(generator="handwritten")
    questions = [QuestionRecord(id=qid, text=text, relevant=[RelevantDocument(doc_id=d) for d in docs],
                                provenance=provenance) for qid, (text, docs) in QUESTIONS.items()]
    manifest = Manifest(corpus_fingerprint=corpus.fingerprint, n_documents=len(corpus.documents),
                        n_questions=len(questions), source=str(root))
    out = tmp_path_factory.mktemp("dataset")
    write_dataset(out, corpus.documents, questions, manifest, force=True)
    return load_dataset(out)


def bm25_report(dataset, chunk_size: int):
    config = EvalConfig(retriever="bm25", model=None, chunk_size=chunk_size, chunk_overlap=10, ks=[1, 3, 5, 10],
                        top_k=5)
    return evaluate(dataset, config, progress=False)


@pytest.fixture(scope="session")
def reports(dataset):
    """bm25 with 12-character chunks (a) and 40-character chunks (b): at k = 3, q-tang newly passes in b and
    q-suan newly fails."""
    return bm25_report(dataset, 12), bm25_report(dataset, 40)


@pytest.fixture
def report_files(reports, tmp_path):
    paths = []
    for name, report in zip(("small_chunks", "large_chunks"), reports):
        report.save(tmp_path / f"{name}.json")
        paths.append(tmp_path / f"{name}.json")
    return paths
