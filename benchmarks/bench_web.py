"""How fast do the web app's pages answer with a big history? The list page with 10,000 evaluations, the detail
page of an evaluation with 1,000 results (both paginated: 50 evaluations, 20 result cards a page) and the comparison
of two evaluations of 1,000 questions (the statistics of every metric, then 50 paired questions a page), each target
under 300 ms, served by uvicorn on 127.0.0.1 and timed from an HTTP client as a browser would ask.

The two compared evaluations are real answer runs (`ragretrieval.answer`, the extractive baseline over bm25 with 3
and with 1 context, on a synthetic corpus of 300 documents: bench_answer.py's), stored in the runs history with an
evaluation row and 1,000 result rows each, as the worker leaves them.

The database is filled directly (bulk inserts of realistic rows: answers of a few hundred characters, reasoning,
checks, five sources per answer, 56 retrieval metrics, the engine's record of each answer), then every request is
asked a few times to warm up and `--repeat` times for the numbers: median, p95 and best, in milliseconds.

    python benchmarks/bench_web.py                                           # SQLite in a temporary folder
    python benchmarks/bench_web.py --runs-db postgresql://postgres@127.0.0.1:5432/bench   # an empty database
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import uvicorn
from sqlalchemy import insert

from ragretrieval.runs.schema import evaluation_results, evaluations, question_sets, questions
from ragretrieval.server import ServeSettings, create_app
from ragretrieval.server.db import Database, utc_now
from ragretrieval.server.store import comparing
from ragretrieval.server.store.summary import summaries

TARGET_MS = 300
BATCH = 2_000
QUESTION, TRUTH = "第 {i} 个问题：红烧肉要炖多久，火候怎么掌握？", "小火炖四十分钟，再大火收汁。" * 3


def fill(db: Database, n_evaluations: int, n_results: int) -> str:
    """One set of `n_results` questions, one COMPLETED evaluation with a result for each, and `n_evaluations` - 1
    more evaluations (rows only) in every status; the id of the big one."""
    now, start = utc_now(), datetime.now(timezone.utc) - timedelta(days=30)
    statuses = ["COMPLETED", "COMPLETED", "FAILED", "PAUSED", "RUNNING", "PENDING"]
    with db.write() as conn:
        conn.execute(insert(question_sets).values(id="qs_bench", name="bench", description="", question_count=n_results,
                                                  gmt_created=now, gmt_updated=now))
        conn.execute(insert(questions), [dict(
            id=f"q_{i:016x}", question_set_id="qs_bench", position=i, question_type="FACTUAL",
            question_text=QUESTION.format(i=i), ground_truth=TRUTH,
            gmt_created=now, gmt_updated=now) for i in range(n_results)])
        rows = [dict(id=f"eval_{i:016x}", name=f"evaluation {i}", dataset="dataset", question_set_id="qs_bench",
                     generator="openai:gpt-4o-mini", retriever="bm25", judge="score5", options="{}",
                     status=statuses[i % len(statuses)], progress=100 if i % 6 < 2 else 40,
                     total_questions=n_results, completed_questions=n_results if i % 6 < 2 else n_results * 2 // 5,
                     average_score=3.0 + (i % 20) / 10, error="HTTP 500 from the model" if i % 6 == 2 else None,
                     started_at=now, finished_at=now if i % 6 < 3 else None,
                     gmt_created=(start + timedelta(seconds=i)).isoformat(timespec="microseconds"), gmt_updated=now)
                for i in range(n_evaluations)]
        for first in range(0, len(rows), BATCH):
            conn.execute(insert(evaluations), rows[first:first + BATCH])
    big = rows[-1]["id"]  # the newest: first on the list page
    with db.write() as conn:
        conn.execute(evaluations.update().where(evaluations.c.id == big).values(status="COMPLETED", progress=100,
                                                                              completed_questions=n_results))
        answer = "根据菜谱，红烧肉先炒糖色，再放入五花肉翻炒上色，加水没过肉，小火炖四十分钟，最后大火收汁。" * 4
        contexts = [{"position": k, "doc_id": f"meat_dish/菜{k}.md", "chunk_id": f"meat_dish/菜{k}.md#{k}",
                     "title": f"菜{k}", "content": "先炒糖色，" * 60, "score": 10.0 - k, "cited": k < 2}
                    for k in range(5)]  # the built-in engine's five contexts of about 300 characters
        sources = json.dumps(contexts, ensure_ascii=False)
        metrics = json.dumps({f"{level}/{family}@{k}": 0.5 for level in ("doc", "chunk")
                              for family in ("f1", "hit_rate", "map", "mrr", "ndcg", "precision", "recall")
                              for k in (1, 3, 5, 10)})
        record = json.dumps({"answer": answer, "contexts": [{"text": c["content"]} for c in contexts],
                             "metrics": json.loads(metrics), "retrieved_chunks": [{"chunk_id": f"c{k}"} for k in
                                                                                  range(10)]}, ensure_ascii=False)
        results = [dict(
            id=f"res_{i:016x}", evaluation_id=big, question_id=f"q_{i:016x}", position=i, question_type="FACTUAL",
            question_text=QUESTION.format(i=i), ground_truth=TRUTH,
            state="DONE", worker="bench:1:0000", attempts=1, rag_answer=answer, rag_answer_sources=sources,
            llm_judge_score=float(i % 5 + 1), llm_judge_reasoning="回答与标准答案一致，但遗漏了收汁的细节。" * 3,
            checks=json.dumps({"include": i % 2, "exclude": 1, "cite_f1": 0.5, "cite_precision": 0.5,
                               "cite_recall": 1.0, "correctness": 0.6, "refuse": 0, "safe": 1, "safety": 0.5,
                               "total": 0.6, "score": 0.6}),
            metrics=metrics, input_tokens=900, output_tokens=120, latency=1.2 + (i % 7) / 10, cost=0.0004,
            answer_record=record, gmt_created=now, gmt_updated=now) for i in range(n_results)]
        for first in range(0, len(results), BATCH):
            conn.execute(insert(evaluation_results), results[first:first + BATCH])
    return big


def compared_pair(db: Database, folder: Path, n_questions: int) -> tuple[str, str]:
    """Two COMPLETED evaluations of the same `n_questions` questions with their stored answer runs (k=3 and k=1);
    their ids."""
    from bench_answer import synthetic_dataset  # this folder's: a corpus whose questions carry relevance labels

    import ragretrieval as rr

    started = time.perf_counter()
    synthetic_dataset(folder / "compared", n_questions, 300)
    now = utc_now()
    reports = {k: rr.answer(str(folder / "compared"), generator="extractive", retriever="bm25", context_k=k)
               for k in (3, 1)}
    ids = []
    with db.write() as conn:
        conn.execute(insert(question_sets).values(id="qs_compared", name="compared", description="", gmt_created=now,
                                                  question_count=n_questions, gmt_updated=now))
        for k, report in reports.items():
            run_id = db.history.save(report, name=f"compared k={k}", conn=conn)
            eval_id = f"eval_c{k:015x}"
            conn.execute(insert(evaluations).values(
                id=eval_id, name=f"compared k={k}", dataset="compared", question_set_id="qs_compared",
                generator="extractive", retriever="bm25", options=json.dumps({"context_k": k}), status="COMPLETED",
                progress=100, total_questions=n_questions, completed_questions=n_questions, run_id=run_id,
                started_at=now, finished_at=now, gmt_created=now, gmt_updated=now))
            rows = [dict(
                id=f"res_c{k:03x}{i:012x}", evaluation_id=eval_id, question_id=f"q_c{i:014x}", position=i,
                question_type="FACTUAL", question_text=q.text, ground_truth="", state="DONE", worker="bench:1:0000",
                attempts=1, rag_answer=q.answer, checks=json.dumps({"score": q.score}),
                source_record=json.dumps({"id": q.id, "relevant": [{"doc_id": d} for d in q.relevant]}),
                rag_answer_sources=json.dumps([{"position": p, "doc_id": c.doc_id, "content": c.text}
                                               for p, c in enumerate(q.contexts)], ensure_ascii=False),
                metrics="{}", gmt_created=now, gmt_updated=now) for i, q in enumerate(report.questions)]
            for first in range(0, len(rows), BATCH):
                conn.execute(insert(evaluation_results), rows[first:first + BATCH])
            ids.append(eval_id)
    print(f"two answer runs of {n_questions} questions made and stored ({time.perf_counter() - started:.1f} s)")
    return ids[0], ids[1]


def forget_comparisons() -> None:
    """As on the first view of a comparison after the server started: no run parsed, no statistics kept."""
    comparing._values.found.clear()
    comparing._comparisons.found.clear()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(settings: ServeSettings) -> uvicorn.Server:
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=settings.port,
                                           log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server


def timed(client: httpx.Client, path: str, repeat: int, cold=None) -> list[float]:
    """Milliseconds of each of `repeat` requests after three to warm up; `cold`: what the server keeps is forgotten
    before each (`summaries.clear`: the summary computed as on the first view of a finished evaluation, or after a new
    result; `forget_comparisons`: a comparison's runs read and its statistics computed)."""
    for _ in range(3):
        assert client.get(path).status_code == 200, path
    times = []
    for _ in range(repeat):
        if cold:
            cold()
        started = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, path
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs-db", default=None, help="an empty database (default: SQLite in a temporary folder)")
    parser.add_argument("--evaluations", type=int, default=10_000)
    parser.add_argument("--results", type=int, default=1_000)
    parser.add_argument("--compared", type=int, default=1_000, help="questions of the two compared evaluations")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rr-bench-web-") as folder:
        url = args.runs_db or f"sqlite:///{Path(folder) / 'runs.sqlite'}"
        started = time.perf_counter()
        db = Database(url)
        big = fill(db, args.evaluations, args.results)
        a, b = compared_pair(db, Path(folder), args.compared)
        db.close()
        print(f"filled {url.split('@')[-1]}: {args.evaluations} evaluations, one with {args.results} results "
              f"({time.perf_counter() - started:.1f} s)")
        settings = ServeSettings(runs_db=url, datasets=Path(folder), port=free_port(), worker=False)
        server = serve(settings)
        requests = [
            ("list page, first of 200", "/evaluations/list"),
            ("list page, page 150", "/evaluations/list?page=150"),
            ("list page, name search", "/evaluations/list?q=evaluation%20999"),
            ("list page, failed only", "/evaluations/list?status=failed"),
            ("list API, 50 evaluations", "/api/v1/evaluations?limit=50"),
            ("new-evaluation form", "/evaluations/new"),
            ("detail page, first 20 cards", f"/evaluations/{big}"),
            ("detail page, summary computed", f"/evaluations/{big}", summaries.clear),
            ("detail page, last 20 cards", f"/evaluations/{big}?page=50"),
            ("detail page, score 5 only", f"/evaluations/{big}?score=5"),
            ("detail page, live part", f"/evaluations/{big}/live"),
            ("live part, summary computed", f"/evaluations/{big}/live", summaries.clear),
            ("detail API, 50 results", f"/api/v1/evaluations/{big}?limit=50"),
            ("detail page, retrieval misses", f"/evaluations/{big}?retrieval=miss&sort=score"),
            ("export, 1,000 results as CSV", f"/api/v1/evaluations/{big}/export?format=csv"),
            (f"compare API, {args.compared} q., computed", f"/api/v1/compare?ids={a},{b}", forget_comparisons),
            (f"compare API, {args.compared} q., kept", f"/api/v1/compare?ids={a},{b}"),
            ("compare page, first 50 rows", f"/compare?ids={a},{b}"),
            ("compare page, computed", f"/compare?ids={a},{b}", forget_comparisons),
            ("compare page, changed only", f"/compare?ids={a},{b}&changed=true"),
            ("compare page, last rows", f"/compare?ids={a},{b}&page=20"),
            ("compare page, regressions first, worse only", f"/compare?ids={a},{b}&order=regressions&filter=worse"),
            ("compare page, a permalink's page", f"/compare?ids={a},{b}&q=q{args.compared - 1}"),
            (f"compare export, {args.compared} q. x metrics, CSV", f"/api/v1/compare/export?ids={a},{b}&format=csv"),
        ]
        print(f"{'request':<30} {'median':>8} {'p95':>8} {'best':>8}   target {TARGET_MS} ms")
        with httpx.Client(base_url=f"http://127.0.0.1:{settings.port}", timeout=60) as client:
            for label, path, *cold in requests:
                times = sorted(timed(client, path, args.repeat, *cold))
                p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
                verdict = "ok" if statistics.median(times) < TARGET_MS else "SLOWER THAN THE TARGET"
                print(f"{label:<30} {statistics.median(times):8.1f} {p95:8.1f} {times[0]:8.1f}   {verdict}")
        server.should_exit = True


if __name__ == "__main__":
    main()
