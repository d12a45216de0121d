"""`score_files`: a run read in batches of whole queries gives the in-memory path's numbers bit for bit, under every
option, whether the file is grouped, interleaved (grouped on disk, or refused) or gzipped; blocks end where queries
do; damaged files are named; temporary files go away (docs/metrics.md, "Runs larger than memory")."""

from __future__ import annotations

import gzip
import itertools
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from ragretrieval.scoring import InterleavedRunError, Qrels, Run, scan, score, score_files, stream
from ragretrieval.scoring.trec import TrecFormatError, read_qrels, read_run, write_qrels, write_run
from ragretrieval.scoring.types import ScoringError
from ragretrieval.work.progress import RecordingProgress

METRICS = ["precision@1", "precision@5", "recall@3", "hit_rate@2", "mrr", "mrr@3", "f1@4", "ndcg@3", "ndcg",
           "ndcg_exp@5", "map", "map@2", "r_precision"]
OPTIONS = [{}, {"queries": "both"}, {"ties": "rank"}, {"depth": 3}, {"rel_level": 2}, {"duplicates": "first"},
           {"queries": "both", "depth": 1, "rel_level": 3}]


def messy(seed: int, n_queries: int = 300):
    """Qrels and a run with the shapes that matter: score ties, repeated docs, short and missing rankings, run
    queries the qrels do not know, long and multi-byte ids, labels -1 to 3."""
    rng = np.random.default_rng(seed)
    ids = [f"{p}{i}" for i, p in enumerate(rng.choice(["d", "doc-", "é", "x" * 20, "🙂/"], 4000))]
    judged = {}
    for q in range(n_queries):
        docs = rng.choice(len(ids), int(rng.integers(1, 8)), replace=False)
        judged[f"q{q}"] = {ids[d]: int(rng.integers(-1, 4)) for d in docs}
    rankings = {}
    for q in list(range(n_queries))[int(n_queries * 0.1):] + [f"extra{i}" for i in range(20)]:
        qid = f"q{q}" if isinstance(q, int) else q
        depth = int(rng.integers(1, 25))
        docs = [ids[d] for d in rng.integers(0, len(ids), depth)]
        if qid in judged and rng.random() < 0.7:
            docs[: len(judged[qid])] = list(judged[qid])[:depth]
        scores = np.round(rng.random(depth), 1 if rng.random() < 0.3 else 6)  # a third of the queries tie
        rankings[qid] = list(zip(docs, scores.tolist()))
    return Qrels.from_dict(judged), rankings


def run_text(rankings: dict, order: str, rng) -> bytes:
    """The run's lines grouped by query (ranking order), or interleaved (every line in a random place)."""
    lines = [f"{q} Q0 {d} {r} {s!r} tag\n".encode() for q, ranking in rankings.items()
             for r, (d, s) in enumerate(ranking, start=1)]
    if order == "interleaved":
        lines = [lines[i] for i in rng.permutation(len(lines))]
    return b"".join(lines)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("streaming")
    qrels, rankings = messy(1)
    write_qrels(qrels, folder / "qrels.txt")
    rng = np.random.default_rng(2)
    paths = {}
    for order in ("grouped", "interleaved"):
        paths[order] = folder / f"{order}.txt"
        paths[order].write_bytes(run_text(rankings, order, rng))
        paths[f"{order}.gz"] = folder / f"{order}.txt.gz"
        paths[f"{order}.gz"].write_bytes(gzip.compress(paths[order].read_bytes()))
    return folder / "qrels.txt", paths


def same(one, other) -> bool:
    """Same queries, same per-query values and means, to the bit."""
    return (list(one.query_ids) == list(other.query_ids) and one.missing_queries == other.missing_queries
            and all(np.array_equal(one.per_query[m], other.per_query[m]) for m in one.per_query)
            and all(np.float64(one.means[m]).tobytes() == np.float64(other.means[m]).tobytes() for m in one.means))


@pytest.fixture(params=["one batch", "many batches"])
def batches(request, monkeypatch):
    """The default sizes (the whole test run in one batch), or blocks of 1 KB and batches of 2 KB (dozens)."""
    if request.param == "many batches":
        monkeypatch.setattr(scan, "BLOCK_BYTES", 1024)
        monkeypatch.setattr(stream, "BATCH_BYTES", 2048)
    return request.param


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_grouped_interleaved_and_gzipped_runs_score_as_the_run_in_memory(files, batches, options):
    """Every option, bit for bit: the in-memory path reads the same file whole (with ties="rank" the file's order
    is the ranking, so the interleaved file is compared with itself read whole)."""
    qrels_path, paths = files
    qrels = read_qrels(qrels_path)
    expected = {order: score(qrels, read_run(paths[order], doc_ids=qrels.doc_ids), METRICS, **options)
                for order in ("grouped", "interleaved")}
    if options.get("ties") != "rank":
        assert same(expected["grouped"], expected["interleaved"])
    for name, path in paths.items():
        got = score_files(qrels_path, path, METRICS, **options)
        assert same(got, expected[name.removesuffix(".gz")]), (name, options)


def test_an_interleaved_run_is_refused_with_the_command_that_groups_it(files, batches):
    qrels_path, paths = files
    if batches == "one batch":  # a run that fits one batch is grouped in memory: nothing to refuse
        assert same(score_files(qrels_path, paths["interleaved"], METRICS, interleaved="refuse"),
                    score_files(qrels_path, paths["grouped"], METRICS))
        return
    with pytest.raises(InterleavedRunError) as error:
        score_files(qrels_path, paths["interleaved"], METRICS, interleaved="refuse")
    message = str(error.value)
    assert message.startswith(f"{paths['interleaved']}: the lines of query 'q") and "are not together" in message
    assert f"LC_ALL=C sort -k1,1 -s {paths['interleaved']} > grouped.txt" in message
    with pytest.raises(InterleavedRunError, match=r"zcat .*interleaved\.txt\.gz \| LC_ALL=C sort -k1,1 -s > "):
        score_files(qrels_path, paths["interleaved.gz"], METRICS, interleaved="refuse")
    assert same(score_files(qrels_path, paths["grouped"], METRICS, interleaved="refuse"),
                score_files(qrels_path, paths["grouped"], METRICS))


def test_grouping_on_disk_says_so_and_leaves_no_file(files, monkeypatch, tmp_path):
    monkeypatch.setattr(scan, "BLOCK_BYTES", 1024)
    monkeypatch.setattr(stream, "BATCH_BYTES", 2048)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    qrels_path, paths = files
    progress = RecordingProgress()
    score_files(qrels_path, paths["interleaved"], METRICS, progress=progress)
    assert [stage[0] for stage in progress.stages] == ["scoring interleaved.txt",
                                                       "scoring interleaved.txt, grouped by query"]
    size = paths["interleaved"].stat().st_size
    assert progress.stages[-1][1:] == [size, size]  # every byte scored once, after the restart
    assert len(progress.notes) == 1 and "grouping the run by query in temporary files" in progress.notes[0]
    assert list(tmp_path.iterdir()) == []


def test_a_bad_line_met_while_grouping_is_named_and_no_file_is_left(files, monkeypatch, tmp_path):
    monkeypatch.setattr(scan, "BLOCK_BYTES", 1024)
    monkeypatch.setattr(stream, "BATCH_BYTES", 2048)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    qrels_path, paths = files
    lines = paths["interleaved"].read_bytes().splitlines(keepends=True)
    lines[-3] = b"q1 Q0 d1 1 not-a-score tag\n"
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"".join(lines))
    with pytest.raises(TrecFormatError, match=rf"^{bad}:{len(lines) - 2}: score 'not-a-score' is not a number$"):
        score_files(qrels_path, bad, METRICS)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_progress_counts_the_bytes_of_each_batch(files, monkeypatch):
    monkeypatch.setattr(scan, "BLOCK_BYTES", 1024)
    monkeypatch.setattr(stream, "BATCH_BYTES", 4096)
    qrels_path, paths = files
    progress = RecordingProgress()
    score_files(qrels_path, paths["grouped"], METRICS, progress=progress)
    size = paths["grouped"].stat().st_size
    assert progress.stages == [["scoring grouped.txt", size, size]]
    gzipped = RecordingProgress()
    score_files(qrels_path, paths["grouped.gz"], METRICS, progress=gzipped)
    assert gzipped.stages == [["scoring grouped.txt.gz", None, size]]  # text bytes; the text's size is unknown


# ---------------------------------------------------------------------------------------------- blocks of queries
def first_fields(data: bytes) -> list[bytes]:
    return [line.split()[0] for line in data.splitlines() if line.split()]


@pytest.mark.parametrize("block_bytes", [8, 40, 1 << 22])
def test_blocks_end_where_a_querys_lines_do(tmp_path, monkeypatch, block_bytes):
    """Whole lines, the file's bytes in order, and no query's lines in two blocks, whatever the layout: leading
    blanks, tabs, blank lines, CRLF, a query longer than many blocks, no final newline."""
    monkeypatch.setattr(scan, "BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(block_bytes)
    pieces = []
    for q in range(40):
        for _ in range(int(rng.integers(1, 60 if q == 7 else 6))):
            lead = rng.choice([b"", b" ", b"\t ", b"\n", b"  \r\n"])
            pieces.append(lead + f"query{q % 13}-{q} Q0 d{int(rng.integers(100))} 1 0.5 t".encode()
                          + rng.choice([b"\n", b"\r\n"]))
    data = b"".join(pieces) + b"q-last Q0 d 1 1 t"
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    blocks = [bytes(buffer[:size]) for buffer, size in scan.blocks(path, buffers=3, whole_queries=True)]
    assert b"".join(blocks) == data + b"\n"
    seen: set = set()
    for block in blocks:
        queries = set(first_fields(block))
        assert not queries & seen
        seen |= queries
    assert len(blocks) > (5 if block_bytes < 100 else 0)


def test_a_query_longer_than_many_blocks_grows_the_buffer_once_per_doubling(tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "BLOCK_BYTES", 64)
    path = tmp_path / "run.txt"
    path.write_bytes(b"".join(f"q Q0 d{i} {i} 1 t\n".encode() for i in range(5000)) + b"r Q0 d 1 1 t\n")
    sizes = [len(buffer) for buffer, _ in scan.blocks(path, whole_queries=True)]
    assert len(sizes) == 2 and sizes[0] >= 5000 * 14


# ----------------------------------------------------------------------------------------------- damaged files
def test_a_truncated_gzip_is_named(files, tmp_path):
    qrels_path, paths = files
    data = paths["grouped.gz"].read_bytes()
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(TrecFormatError, match=rf"^{cut}: the gzip file is truncated \("):
        score_files(qrels_path, cut, METRICS)
    with pytest.raises(TrecFormatError, match=rf"^{cut}: the gzip file is truncated \("):
        read_run(cut)


def test_a_damaged_gzip_is_named(files, tmp_path):
    qrels_path, paths = files
    data = bytearray(paths["grouped.gz"].read_bytes())
    data[-8] ^= 0xFF  # the CRC
    bad = tmp_path / "crc.txt.gz"
    bad.write_bytes(bytes(data))
    with pytest.raises(TrecFormatError, match=rf"^{bad}: not a valid gzip file \("):
        score_files(qrels_path, bad, METRICS)
    bad.write_bytes(b"\x1f\x8b" + b"not really gzip" * 10)
    with pytest.raises(TrecFormatError, match=rf"^{bad}: not a valid gzip file \("):
        score_files(qrels_path, bad, METRICS)


def test_a_file_named_gz_that_is_not_gzip_is_read_as_text(files, tmp_path):
    qrels_path, paths = files
    plain = tmp_path / "plain.txt.gz"
    plain.write_bytes(paths["grouped"].read_bytes())
    assert same(score_files(qrels_path, plain, METRICS), score_files(qrels_path, paths["grouped"], METRICS))


def test_gzipped_qrels_are_read_as_they_are(files, tmp_path):
    qrels_path, paths = files
    packed = tmp_path / "qrels.txt.gz"
    packed.write_bytes(gzip.compress(qrels_path.read_bytes()))
    assert same(score_files(packed, paths["grouped"], METRICS), score_files(qrels_path, paths["grouped"], METRICS))


def test_errors_name_the_line_of_the_file_in_any_batch(files, tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "BLOCK_BYTES", 256)
    monkeypatch.setattr(stream, "BATCH_BYTES", 512)
    qrels_path, paths = files
    lines = paths["grouped"].read_bytes().splitlines(keepends=True)
    for at, bad, message in [(-5, b"q9 Q0 d\xff 1 1 t\n", "document id 'd\ufffd' is not valid UTF-8"),
                             (-5, b"q\xe9 Q0 d 1 1 t\n", "query id 'q\ufffd' is not valid UTF-8"),
                             (400, b"q1 Q0 d 1\n", "expected at least 6 fields (qid Q0 docid rank score tag), got 4")]:
        broken = tmp_path / "broken.txt"
        broken.write_bytes(b"".join(lines[:at] + [bad] + lines[at:]))
        number = (at if at > 0 else len(lines) + at) + 1
        with pytest.raises(TrecFormatError) as error:
            score_files(qrels_path, broken, METRICS)
        assert str(error.value) == f"{broken}:{number}: {message}"


def test_a_doc_listed_twice_is_refused_as_in_memory(files, tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "BLOCK_BYTES", 256)
    monkeypatch.setattr(stream, "BATCH_BYTES", 512)
    qrels_path, paths = files
    qrels = read_qrels(qrels_path)
    with pytest.raises(ScoringError) as in_memory:
        score(qrels, read_run(paths["grouped"]), METRICS, duplicates="error")
    with pytest.raises(ScoringError) as streamed:
        score_files(qrels_path, paths["grouped"], METRICS, duplicates="error")
    assert str(streamed.value) == str(in_memory.value) and "more than once" in str(in_memory.value)


# ------------------------------------------------------------------------------------------------ small shapes
@pytest.fixture
def qrels_file(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_bytes(b"q1 0 a 1\nq1 0 b 2\nq2 0 c 1\n")
    return path


def test_an_empty_run_scores_every_query_zero(qrels_file, tmp_path):
    for data in (b"", b"\n\n  \n"):
        run = tmp_path / "empty.txt"
        run.write_bytes(data)
        result = score_files(qrels_file, run, ["mrr", "ndcg@3"])
        assert result.missing_queries == ["q1", "q2"] and result.means == {"mrr": 0.0, "ndcg@3": 0.0}
        with pytest.raises(ScoringError, match="nothing to score: none of the 2 judged queries is in the run"):
            score_files(qrels_file, run, "mrr", queries="both")


def test_a_run_of_one_line(qrels_file, tmp_path):
    run = tmp_path / "one.txt"
    run.write_bytes(b"q1 Q0 b 1 2.5 t")
    result = score_files(qrels_file, run, ["mrr", "recall@1"])
    assert result.per_query["mrr"].tolist() == [1.0, 0.0] and result.per_query["recall@1"].tolist() == [0.5, 0.0]


def test_qrels_may_be_given_as_qrels(qrels_file, tmp_path):
    run = tmp_path / "run.txt"
    write_run(Run.from_dict({"q2": {"c": 1.0}, "q1": {"x": 3.0, "a": 2.0}}), run)
    from_path = score_files(qrels_file, run, ["mrr", "map"])
    assert same(score_files(read_qrels(qrels_file), run, ["mrr", "map"]), from_path)
    assert from_path.per_query["mrr"].tolist() == [0.5, 1.0]


@pytest.mark.parametrize("option, value, message", [
    ("interleaved", "sort", "interleaved must be one of group, refuse; got 'sort'"),
    ("interleaved", None, "interleaved must be one of group, refuse; got None"),
    ("depth", 0, "depth must be a positive integer, got 0"),
    ("depth", -1, "depth must be a positive integer, got -1"),
    ("depth", 2.5, "depth must be a positive integer, got 2.5"),
    ("depth", True, "depth must be a positive integer, got True"),
    ("rel_level", 0, "rel_level must be an integer >= 1, got 0"),
    ("ties", "random", "ties must be one of score, rank; got 'random'"),
])
def test_options_are_checked_before_the_run_is_read(qrels_file, tmp_path, option, value, message):
    missing = tmp_path / "absent.txt"  # never opened: the options are refused first
    with pytest.raises(ScoringError) as error:
        score_files(qrels_file, missing if option != "interleaved" else qrels_file, "mrr", **{option: value})
    assert str(error.value) == message


def test_huge_and_odd_values_of_the_options(qrels_file, tmp_path):
    run = tmp_path / "run.txt"
    run.write_bytes(b"q1 Q0 b 1 2 t\nq1 Q0 a 2 1 t\n")
    assert score_files(qrels_file, run, "mrr", rel_level=10**30).means == {"mrr": 0.0}
    assert score_files(qrels_file, run, "mrr", depth=10**30).per_query["mrr"].tolist() == [1.0, 0.0]


def test_duplicates_error_checks_only_the_docs_within_depth():
    """trec_eval -M keeps the first docs and refuses a doc twice among them only: so does duplicates="error"."""
    qrels = Qrels.from_dict({"q": {"a": 1}})
    run = Run.from_dict({"q": ["a", "b", "c", "b"]})
    assert score(qrels, run, "mrr", duplicates="error", depth=3).means == {"mrr": 1.0}
    with pytest.raises(ScoringError, match="query 'q' retrieves document 'b' more than once"):
        score(qrels, run, "mrr", duplicates="error", depth=4)
    with pytest.raises(ScoringError, match="retrieves document 'b' more than once"):
        score(qrels, run, "mrr", duplicates="error")


def test_many_small_batches_equal_one_for_random_runs(tmp_path, monkeypatch):
    """Random seeds, random block and batch sizes: the cut between batches never changes a number."""
    for seed, (block, batch) in zip(range(3), itertools.product([64, 512], [100, 3000])):
        qrels, rankings = messy(seed + 10, 60)
        write_qrels(qrels, tmp_path / "q.txt")
        (tmp_path / "r.txt").write_bytes(run_text(rankings, "grouped", np.random.default_rng(seed)))
        whole = score_files(tmp_path / "q.txt", tmp_path / "r.txt", METRICS)
        monkeypatch.setattr(scan, "BLOCK_BYTES", block)
        monkeypatch.setattr(stream, "BATCH_BYTES", batch)
        assert same(score_files(tmp_path / "q.txt", tmp_path / "r.txt", METRICS), whole), (seed, block, batch)
        monkeypatch.undo()


def test_a_full_disk_while_grouping_is_named_with_the_sort_command(files, tmp_path):
    """A real write failure (a file-size limit makes every write past 2 kB fail with EFBIG, in a process of its
    own): the error names the folder and the fix, and the folder is removed."""
    qrels_path, paths = files
    script = f"""
import resource, signal, tempfile
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
tempfile.tempdir = {str(tmp_path)!r}
from ragretrieval.scoring import scan, stream, score_files, ScoringError
scan.BLOCK_BYTES, stream.BATCH_BYTES = 1024, 2048
try:
    score_files({str(qrels_path)!r}, {str(paths["interleaved"])!r}, "mrr")
except ScoringError as error:
    print(error)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    message = done.stdout.strip()
    assert message.startswith(f"{paths['interleaved']}: could not group the interleaved run in {tmp_path}")
    assert "(File too large); set TMPDIR to a folder with room" in message
    assert message.endswith(f"LC_ALL=C sort -k1,1 -s {paths['interleaved']} > grouped.txt")
    assert list(tmp_path.iterdir()) == []


def test_rr_score_reads_a_run_file_streamed(files, monkeypatch):
    """`ragretrieval.score` on two paths takes the streamed path: gzip read as it is, an interleaved run grouped or
    refused (a run read whole could not tell), progress reported by batch."""
    import ragretrieval as rr

    qrels_path, paths = files
    monkeypatch.setattr(scan, "BLOCK_BYTES", 1024)
    monkeypatch.setattr(stream, "BATCH_BYTES", 2048)
    qrels = read_qrels(qrels_path)
    expected = score(qrels, read_run(paths["grouped"], doc_ids=qrels.doc_ids), METRICS)
    for name in ("grouped", "grouped.gz", "interleaved", "interleaved.gz"):
        assert same(rr.score(qrels_path, paths[name], METRICS), expected), name
        assert same(rr.score(str(qrels_path), str(paths[name]), METRICS), expected), name
    with pytest.raises(InterleavedRunError, match="LC_ALL=C sort -k1,1 -s"):
        rr.score(qrels_path, paths["interleaved.gz"], METRICS, interleaved="refuse")
    for run in (paths["grouped"], {"q1": {"d": 1.0}}):  # a bad value is refused for a run in memory too
        for bad in ("never", None, 1, ""):
            with pytest.raises(ScoringError, match=f"interleaved must be one of group, refuse; got {bad!r}"):
                rr.score(qrels_path, run, METRICS, interleaved=bad)
    with pytest.raises(TypeError, match="progress must follow the Progress protocol"):
        rr.score(qrels_path, paths["grouped"], METRICS, progress="yes")
    recorded = RecordingProgress()
    rr.score(qrels_path, paths["grouped"], METRICS, progress=recorded)
    size = paths["grouped"].stat().st_size
    assert recorded.stages == [["scoring grouped.txt", size, size]]
