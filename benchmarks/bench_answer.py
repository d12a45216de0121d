"""How much of ragretrieval's own time does an answer run cost per question? 1,000 questions answered over HTTP by
an OpenAI-compatible server that answers at once, in another process, so this process's CPU time is ours: prompt
rendering, the OpenAI client and its HTTP, the answer cache, citations, checks, retrieval and its metrics, the
journal, the report. Target (issue F1): <= 10 ms of own CPU time per question with --threads 8.

Data (seeded): DOCS synthetic documents of ~600 characters; each question lists 5 of them as its context and has
RAG-IFEval-style checks (include with alternatives, exclude, cite). Two runs: contexts given (no retrieval), and
contexts retrieved by BM25 (top 5 chunks, with the retrieval metrics of each ranking). Every run starts with an empty
answer cache, so every question is a real request. Printed: own CPU time and wall time per question, for the answering
phase (the session built) and for the whole run (session included).

    python benchmarks/bench_answer.py                  # 1,000 questions, --threads 8
    python benchmarks/bench_answer.py --questions 200  # a quick smoke run
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("urząd wniosek opłata termin dokument zaświadczenie podatek dowód osobisty paszport gmina rejestr ustawa "
         "formularz odwołanie decyzja pełnomocnictwo konto bank adres zameldowanie dziecko żłobek szkoła").split()


def synthetic_dataset(folder: Path, n_questions: int, n_docs: int, seed: int = 0):
    from ragretrieval.data.corpus import Document, corpus_fingerprint
    from ragretrieval.data.dataset import Manifest, Provenance, QuestionRecord, RelevantDocument, write_dataset

    rng = random.Random(seed)
    documents = [Document(f"doc-{i:05d}", f"Dokument {i}", " ".join(rng.choices(WORDS, k=90)) + f" kod {i}.")
                 for i in range(n_docs)]
    questions = []
    for i in range(n_questions):
        context = rng.sample(range(n_docs), 5)
        target = documents[context[0]]
        rng.shuffle(context)
        questions.append(QuestionRecord(
            id=f"q{i}", text=f"Jaki jest kod {target.id}? " + " ".join(rng.choices(WORDS, k=6)),
            context=[documents[c].id for c in context], relevant=[RelevantDocument(doc_id=target.id)],
            expect={"include": [[f"kod {target.id[4:]}", target.id], "urząd"], "exclude": ["paszport"],
                    "cite": [target.id]}, provenance=Provenance(generator="bench")))
    manifest = Manifest(corpus_fingerprint=corpus_fingerprint(documents), n_documents=n_docs,
                        n_questions=n_questions)
    write_dataset(folder, documents, questions, manifest, force=True)


def start_server() -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, "-m", "ragretrieval.testing.chat_server", "--reply",
                                "Kod to 00042, sprawę załatwia urząd gminy [0]. Szczegóły w dokumencie [2]."],
                               stdout=subprocess.PIPE, text=True)
    return process, process.stdout.readline().strip()


def one_run(dataset, url: str, contexts: str, threads: int, cache: Path) -> dict:
    from ragretrieval.answers.batch import run_answers
    from ragretrieval.answers.generators import GeneratorOptions
    from ragretrieval.answers.session import AnswerSession, AnswerSettings
    from ragretrieval.evaluation.report import EvalConfig

    os.environ["RAGRETRIEVAL_CACHE_DIR"] = str(cache)  # empty: every question is a real request
    settings = AnswerSettings(generator="openai:bench", contexts=contexts, retrieval=EvalConfig(retriever="bm25"),
                              generator_options=GeneratorOptions(base_url=url, max_retries=0))
    cpu, wall = time.process_time(), time.perf_counter()
    session = AnswerSession(dataset, settings)
    cpu_answer, wall_answer = time.process_time(), time.perf_counter()
    report = run_answers(session, threads=threads, journal_path=cache / "journal.jsonl")
    done_cpu, done_wall = time.process_time(), time.perf_counter()
    assert report.failed == 0 and report.usage["answered"] == len(dataset.questions)
    n = len(dataset.questions)
    return {"contexts": contexts, "answer_cpu": (done_cpu - cpu_answer) / n * 1e3,
            "answer_wall": (done_wall - wall_answer) / n * 1e3, "total_cpu": (done_cpu - cpu) / n * 1e3,
            "total_wall": (done_wall - wall) / n * 1e3, "score": report.means["answer"]["score"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "bench")
    from ragretrieval.data.dataset import load_dataset

    process, url = start_server()
    try:
        with tempfile.TemporaryDirectory() as folder:
            synthetic_dataset(Path(folder) / "ds", args.questions, args.docs)
            dataset = load_dataset(Path(folder) / "ds")
            rows = [one_run(dataset, url, mode, args.threads, Path(folder) / f"cache-{mode}")
                    for mode in ("given", "retrieved")]
    finally:
        process.terminate()
        process.wait()
    print(f"{args.questions} questions, {args.docs} documents, --threads {args.threads}, server {url} (another "
          f"process, answers at once); ms per question")
    print(f"{'contexts':<10} {'answering CPU':>14} {'answering wall':>15} {'whole run CPU':>14} "
          f"{'whole run wall':>15}  target: answering CPU <= 10 ms")
    for row in rows:
        print(f"{row['contexts']:<10} {row['answer_cpu']:>14.2f} {row['answer_wall']:>15.2f} {row['total_cpu']:>14.2f} "
              f"{row['total_wall']:>15.2f}  {'ok' if row['answer_cpu'] <= 10 else 'OVER'}")


if __name__ == "__main__":
    main()
