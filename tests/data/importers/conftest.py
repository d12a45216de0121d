"""Real traces of one small RAG app over the demo corpus, written once per session by MLflow and by the
OpenTelemetry SDK (trace_writers.py, in processes of their own), with what each library says about them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

WRITER = Path(__file__).with_name("trace_writers.py")
LUYU = "https://git.example.org/cookbook/blob/main/dishes/aquatic/清蒸鲈鱼.md"

# what the app does for each request (trace_writers.py says how a case becomes spans)
CASES = [
    {"request": "如何做清蒸鲈鱼？",
     "retrievals": [[{"doc_uri": "aquatic/油焖大虾.md", "content": "油焖大虾用虾头熬油"}],
                    [{"doc_uri": LUYU, "content": "大火蒸 8 分钟", "score": 0.92},
                     {"doc_uri": "aquatic/红烧带鱼.md", "content": "带鱼先煎", "score": 0.41}]],
     "answer": "大火蒸 8 分钟 [0]。", "usage": [[120, 30], [80, 20]]},
    {"request": "如何做 煮鸡蛋?", "retrievals": [[{"doc_uri": "breakfast/煮鸡蛋.md", "content": "冷水下锅"}]],
     "answer": "溏心蛋煮 6 分钟。", "usage": [[50, 10]]},
    {"request": {"messages": [{"role": "user", "content": "我想做个川菜"},
                              {"role": "assistant", "content": "可以试试麻婆豆腐或回锅肉。"},
                              {"role": "user", "content": "如何做麻婆豆腐？"}]},
     "retrievals": [[{"doc_uri": "vegetable_dish/麻婆豆腐.md", "content": "豆腐切块焯水"},
                     {"doc_uri": "meat_dish/回锅肉.md", "content": "五花肉煮熟切片"}]],
     "answer": "先把豆腐焯水 [0]。", "usage": [[200, 40]]},
    {"request": "如何做清蒸鲈鱼？", "retrievals": [[{"doc_uri": "aquatic/红烧带鱼.md", "content": "带鱼先煎"}]],
     "answer": "蒸十分钟。", "usage": [[90, 12]]},
    {"request": "北京到上海的高铁要坐几个小时？", "retrievals": [], "answer": "菜谱里没有这个信息。", "usage": [[30, 8]]},
    {"request": "如何做蛋炒饭？", "retrievals": [[{"doc_uri": "staple/蛋炒饭.md", "content": "隔夜饭"}]],
     "answer": None, "usage": []},
]


def write_traces(kind: str, folder: Path) -> tuple[Path, list[dict]]:
    folder.mkdir(parents=True, exist_ok=True)
    cases, out, truth = folder / "cases.json", folder / f"{kind}.jsonl", folder / "truth.json"
    cases.write_text(json.dumps(CASES, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run([sys.executable, str(WRITER), kind, str(cases), str(out), str(truth)], capture_output=True,
                          text=True, cwd=folder)
    assert done.returncode == 0, done.stderr
    return out, json.loads(truth.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def mlflow_traces(tmp_path_factory) -> tuple[Path, list[dict]]:
    """MLflow 3 traces, one ``Trace.to_json()`` per line, and per case: trace id, root start and end (ns), and the
    same trace in MLflow 2's layout."""
    return write_traces("mlflow", tmp_path_factory.mktemp("mlflow-traces"))


@pytest.fixture(scope="session")
def otlp_traces(tmp_path_factory) -> tuple[Path, list[dict]]:
    """OTLP JSON as the Collector's file exporter writes it (two lines, each trace split over both), and per case:
    trace id (hex), root start and end (ns)."""
    return write_traces("otlp", tmp_path_factory.mktemp("otlp-traces"))
