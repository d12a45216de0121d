"""`build_dataset`: a dataset folder (corpus.jsonl, questions.jsonl, manifest.json) from a folder of Markdown files,
what ``ragretrieval build-dataset`` and `ragretrieval.build_dataset` do.

Questions come from file names (``filename``: one per document, from a template) and from any further source the
caller passes as `more_questions` (``build-dataset --generator llm`` passes the LLM's, llm/questions/). The files
are written atomically, the manifest last; an existing dataset is replaced only with `force`, and one that is the
same build (the same corpus fingerprint and settings, without a model's questions) is left as it is, with a note:
running the same command twice works the second time.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Callable, Sequence

from .. import __version__
from ..errors import RagretrievalError
from ..scoring.trec import trec_writable
from .corpus import load_corpus
from .dataset import (
    MANIFEST_FILE,
    Dataset,
    DatasetError,
    Manifest,
    QuestionRecord,
    SkippedRecord,
    check_writable,
    load_dataset,
    write_dataset,
)
from .filename_questions import DEFAULT_TEMPLATE, check_template, filename_questions

GENERATORS = ("filename", "llm")

# (documents, out folder, questions so far) -> (all questions, what the manifest records of how they were made)
MoreQuestions = Callable[[Sequence, Path, list[QuestionRecord]], tuple[list[QuestionRecord], dict]]


def parse_generators(names) -> list[str]:
    """``"filename,llm"`` (or a list) -> the generator names, in order, each once; unknown names refused."""
    parts = [names] if isinstance(names, str) else list(names)
    found = list(dict.fromkeys(n.strip() for part in parts for n in part.split(",") if n.strip()))
    if not found or any(name not in GENERATORS for name in found):
        raise DatasetError(f"generators must be a comma-separated list of {', '.join(GENERATORS)}; got {names!r}")
    return found


def default_out(corpus_dir) -> Path:
    """``./<folder name>-dataset``."""
    return Path(f"{Path(corpus_dir).resolve().name}-dataset")


def build_dataset(corpus_dir, out=None, *, template: str = DEFAULT_TEMPLATE, strict: bool = False,
                  force: bool = False, generators=("filename",), more_questions: MoreQuestions | None = None,
                  on_skip: Callable | None = None, on_note: Callable[[str], None] | None = None) -> Dataset:
    """Build a dataset from the Markdown files under `corpus_dir` into `out` (default ``./<name>-dataset``) and
    return it loaded. `generators` lists where questions come from: ``filename`` (free, one per file name, from
    `template`: placeholders {name}, {title}, {folder}) and ``llm`` (then `more_questions` makes them). `strict`
    stops at the first unreadable, binary, non-UTF-8 or empty file (otherwise each is skipped and `on_skip(skipped)`
    is told); `force` replaces a dataset already in `out`. When `out` holds this very build already (filename
    questions only), nothing is written and `on_note` is told so (else it is a warning)."""
    generators = parse_generators(generators)
    if "llm" in generators and more_questions is None:
        raise DatasetError("generator llm needs the LLM's settings: use `ragretrieval dataset build --generator llm` "
                           "(docs/llm.md)")
    out = Path(out) if out is not None else default_out(corpus_dir)
    check_template(template)
    maybe_same = not force and "llm" not in generators and (out / MANIFEST_FILE).is_file()
    if not maybe_same:
        check_writable(out, force)  # before reading the corpus or paying for any request
    corpus = load_corpus(corpus_dir, strict=strict, on_skip=on_skip)
    builder: dict = {"generators": generators, "template": template, "strict": strict}
    if maybe_same:
        same = _same_build(out, corpus.fingerprint, builder)
        if same is not None:
            note = f"{out}: already holds this build (the same corpus and settings); nothing written"
            if on_note is None:
                warnings.warn(note, stacklevel=2)
            else:
                on_note(note)
            return same
        check_writable(out, force)  # another build: refused as ever
    questions = filename_questions(corpus.documents, template) if "filename" in generators else []
    if "llm" in generators:
        questions, builder["llm"] = more_questions(corpus.documents, out, questions)
        if not questions:
            raise DatasetError("the model's answers gave no usable question (see the counts above); nothing "
                               "written. Check the model and prompt; answers are cached, so a re-run is free")
    manifest = Manifest(corpus_fingerprint=corpus.fingerprint, n_documents=len(corpus.documents),
                        n_questions=len(questions), source=str(corpus_dir), builder=builder,
                        skipped=[SkippedRecord(path=s.path, reason=s.reason) for s in corpus.skipped],
                        created_by=f"ragretrieval {__version__}")
    write_dataset(out, corpus.documents, questions, manifest, force=force)
    return load_dataset(out)


def _same_build(out: Path, corpus_fingerprint: str, builder: dict) -> Dataset | None:
    """The dataset in `out` when it was built from this corpus with these settings (and is readable), else None."""
    try:
        dataset = load_dataset(out)
    except RagretrievalError:
        return None
    manifest = dataset.manifest
    return dataset if manifest.corpus_fingerprint == corpus_fingerprint and manifest.builder == builder else None


def ids_trec_cannot_hold(dataset: Dataset) -> list[str]:
    """Document ids holding spaces or control characters (tab, newline, DEL...), which TREC files cannot hold:
    trec_eval splits fields on them (scoring/trec.py refuses to write them)."""
    return trec_awkward(d.id for d in dataset.documents)


def trec_awkward(ids) -> list[str]:
    """The ids of `ids` that a TREC file cannot hold (see `ids_trec_cannot_hold`)."""
    return [i for i in ids if not trec_writable(i) or "\x7f" in i]


def trec_ids_warning(awkward: list[str], fix: str) -> str | None:
    """The one warning every way of making a dataset gives for such ids (`fix`: what the user changes), or None."""
    if not awkward:
        return None
    return (f"{len(awkward)} document ids hold spaces or control characters (tab, newline, ...), which TREC files "
            "cannot hold (trec_eval splits fields on them): `runs export --format trec` and `judge chunks "
            f"--qrels-out` will refuse them (JSON exports hold any id); {fix}: {', '.join(map(repr, awkward[:3]))}")
