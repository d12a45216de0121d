"""`run-file`: score results the user already has, from a TREC run file or an agent-evaluation JSONL file.

- TREC (``qid Q0 docid rank score tag``, read by scoring/trec.py): ``qid`` is a question id of the dataset; each
  question's lines are ranked by score as trec_eval does. ``docid`` is one of our chunk ids, a corpus document id,
  or ``<document id>#<n>`` (a chunk of another chunking: it still counts for its document).
- agent JSONL (agent_jsonl.py): ``retrieved_context`` in list order is the ranking; each ``doc_uri`` is resolved to a
  corpus document, and a ``content`` equal to the text of one of our chunks of that document names that chunk.
  Records match questions by ``request_id`` = question id, else by question text (``match=id|text`` forces one);
  the report notes how many matched each way.
A line that matches no question is an error naming the line; questions without results are scored as empty and noted.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import ClassVar, Literal, Sequence

from pydantic import Field

from ...data.dataset import DatasetError, QuestionRecord
from ...data.importers.agent_jsonl import DocumentUris, read_agent_jsonl
from ...errors import MissingInputError
from ...scoring.ranking import ranked_codes
from ...scoring.trec import TrecFormatError, read_run
from ...work.options import PluginOptions, SettingsError, plugin_options
from ..base import Hit, Ranking, RetrieverInfo, RetrieverSpec, SimpleRetriever
from ..hits import ChunkLookup, ranking_from_hits
from . import ExternalRetrieverError

FORMATS = ("trec", "agent-jsonl")
MATCHES = ("auto", "id", "text")


def sniff_format(path: Path) -> str:
    """agent-jsonl for .jsonl/.json files or a first line that starts with '{'; trec otherwise."""
    if path.suffix.lower() in (".jsonl", ".json"):
        return "agent-jsonl"
    with path.open("rb") as f:
        first = next((line for line in f if line.strip()), b"")
    return "agent-jsonl" if first.lstrip().startswith(b"{") else "trec"


def _first_line_of(path: Path, query_id: str) -> int | str:
    with path.open(encoding="utf-8", errors="replace") as f:
        return next((n for n, line in enumerate(f, 1) if line.split()[:1] == [query_id]), "?")


class RunFileOptions(PluginOptions):
    run: str | None = Field(None, description="the results file (eval --run FILE)")
    format: Literal["trec", "agent-jsonl"] | None = Field(None, description="[default: agent-jsonl for .jsonl/.json "
                                                                            "or a first line with {, else trec]")
    match: Literal["auto", "id", "text"] = Field("auto", description="agent records to questions: by request_id, "
                                                                     "by text, or id then text")


class RunFileRetriever(SimpleRetriever):
    """Serves the ranked hits of a results file (options `RunFileOptions`: ``run``, ``format``, ``match``)."""

    Options: ClassVar[type[PluginOptions]] = RunFileOptions

    def __init__(self, path, format: str | None = None, match: str = "auto", records=None):
        """`records`: agent records already read, as (place, record) pairs (a DataFrame's rows: `agent_records`);
        `path` then only names them."""
        self.path, self.records = Path(path), records
        if records is None and not self.path.is_file():
            raise MissingInputError(f"{self.path}: run file not found")
        if format not in (None, *FORMATS):
            raise ExternalRetrieverError(f"run file format must be one of {', '.join(FORMATS)}; got {format!r}")
        if match not in MATCHES:
            raise ExternalRetrieverError(f"match must be one of {', '.join(MATCHES)}; got {match!r}")
        self.format, self.match = format or ("agent-jsonl" if records is not None else sniff_format(self.path)), match
        self.timings: dict[str, float] = {}
        self.notes: list[str] = []
        self._hits: dict[str, list[Hit]] | None = None

    @classmethod
    def build(cls, spec: RetrieverSpec, context) -> "RunFileRetriever":
        return cls.from_options(spec.options)

    @classmethod
    def from_options(cls, options: dict) -> "RunFileRetriever":
        options = RunFileOptions(**plugin_options(RunFileOptions, options, "retriever run-file",
                                                  "retriever_options"))
        if options.run is None:
            raise SettingsError("retriever_options.run, the results file, is missing: retriever run-file scores it",
                                ["retriever_options.run"])
        return cls(options.run, options.format, options.match)

    def index(self, chunks) -> None:
        """Learn our chunking, to tell our chunk ids (and chunk texts) from documents."""
        self._parent_of = {c.chunk_id: c.parent_id for c in chunks}
        self._chunk_with_text = {(c.parent_id, c.text): c.chunk_id for c in chunks}
        self._uris = DocumentUris(c.parent_id for c in chunks)
        self._lookup = ChunkLookup(chunks)
        self._hits = None

    def search(self, questions: Sequence[QuestionRecord], depth: int) -> Ranking:
        return ranking_from_hits(self.search_ids(questions, depth), self._lookup)

    def info(self) -> RetrieverInfo:
        return RetrieverInfo(notes=list(self.notes))

    def search_ids(self, questions: Sequence[QuestionRecord], depth: int) -> list[list[Hit]]:
        if self._hits is None:
            try:
                self._hits = self._read_trec(questions) if self.format == "trec" else self._read_agent(questions)
            except (DatasetError, TrecFormatError) as error:
                raise ExternalRetrieverError(str(error)) from None
            missing = sum(q.id not in self._hits for q in questions)
            if missing:
                self.notes.append(f"run file {self.path.name}: {missing} of {len(questions)} questions have no "
                                  "results in it; scored as retrieving nothing")
        return [self._hits.get(q.id, [])[:depth] for q in questions]

    def _trec_hit(self, doc_id: str, score: float) -> Hit:
        if doc_id in self._parent_of:
            return Hit(parent_id=self._parent_of[doc_id], chunk_id=doc_id, score=score)
        head, sep, _ = doc_id.rpartition("#")
        if doc_id not in self._uris.ids and sep and head in self._uris.ids:
            return Hit(parent_id=head, chunk_id=doc_id, score=score)
        return Hit(parent_id=doc_id, score=score)

    def _read_trec(self, questions) -> dict[str, list[Hit]]:
        run = read_run(self.path)
        known = {q.id for q in questions}
        doc_ids, ranked = run.doc_ids.tolist(), ranked_codes(run, "score")
        hits = {}
        for i, query_id in enumerate(run.query_ids.tolist()):
            if query_id not in known:
                raise ExternalRetrieverError(
                    f"{self.path}:{_first_line_of(self.path, query_id)}: query {query_id!r} is not a question id of "
                    "the dataset (TREC run files match questions by id)")
            score_of = {}
            for code, score in zip(run.codes[i], run.scores[i]):
                score_of.setdefault(int(code), float(score))
            hits[query_id] = [self._trec_hit(doc_ids[c], score_of[int(c)]) for c in ranked[i] if c >= 0]
        self.notes.append(f"run file {self.path.name} (TREC): {len(hits)} questions matched by id")
        return hits

    def _agent_hit(self, uri: str, content: str | None) -> Hit:
        parent = self._uris.resolve(uri)
        if parent is None:
            return Hit(parent_id=uri, text=content)
        return Hit(parent_id=parent, chunk_id=self._chunk_with_text.get((parent, content)), text=content)

    def _read_agent(self, questions) -> dict[str, list[Hit]]:
        by_id = {q.id: q for q in questions}
        by_text: dict[str, list[QuestionRecord]] = {}
        for q in questions:
            by_text.setdefault(q.text, []).append(q)
        hits, line_of, matched = {}, {}, Counter()
        records = self.records or [(f"{self.path}:{n}", r) for n, r in read_agent_jsonl(self.path)]
        for where, record in records:
            if record.retrieved_context is None:
                raise ExternalRetrieverError(f"{where}: field 'retrieved_context': missing (the results to score)")
            question, how = None, None
            if self.match != "text" and record.request_id in by_id:
                question, how = by_id[record.request_id], "id"
            elif self.match != "id" and len(by_text.get(record.question, ())) == 1:
                question, how = by_text[record.question][0], "text"
            elif self.match != "id" and record.question in by_text:
                raise ExternalRetrieverError(f"{where}: request {record.question!r} matches several questions by "
                                             "text; give request_id")
            if question is None:
                ways = {"auto": "by request_id or text", "id": "by request_id", "text": "by text"}[self.match]
                raise ExternalRetrieverError(f"{where}: request {record.question!r} (request_id {record.request_id!r}) "
                                             f"matches no question of the dataset {ways}")
            if question.id in line_of:
                raise ExternalRetrieverError(f"{where}: results for question {question.id!r} were already given at "
                                             f"{line_of[question.id]}")
            line_of[question.id] = where
            matched[how] += 1
            hits[question.id] = [self._agent_hit(item.doc_uri, item.content) for item in record.retrieved_context]
        self.notes.append(f"run file {self.path.name} (agent JSONL): {matched['id']} questions matched by "
                          f"request_id, {matched['text']} by text")
        return hits
