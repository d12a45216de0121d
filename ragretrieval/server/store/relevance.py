"""Expected next to retrieved: which of a result's sources are the question's relevant documents, which relevant
documents were not among them, and the question's recall and MRR over them.

The relevant documents are the question's labels (its ``source_record``'s ``relevant``, each with a grade; a label
counts from the evaluation's ``rel_level``, 1 by default, as in ``eval``). The sources are what the answer was given
(an answer evaluation's contexts, in the order the generator saw them) or the document ranking (a retrieval
evaluation's). The figures are at document level, as ``eval``'s are: each document counts once, at its first source,
so with sources ``A, A, B`` the document B is at rank 2.

- recall = relevant documents among the sources / relevant documents;
- MRR = 1 / the document rank of the first relevant document (0 when none is among the sources).

For a retrieval evaluation they are its ``doc/recall@K`` and ``doc/mrr@K`` at the largest cutoff K. A question
without relevant documents has neither (None): it is neither a hit nor a miss.
"""

from __future__ import annotations


def relevant_documents(source_record: dict | None, rel_level: int = 1) -> list[str]:
    """The question's relevant document ids, in label order."""
    found = []
    for label in (source_record or {}).get("relevant") or []:
        doc_id, grade = (label.get("doc_id"), label.get("grade", 1)) if isinstance(label, dict) else (label, 1)
        if isinstance(doc_id, str) and isinstance(grade, (int, float)) and grade >= rel_level and doc_id not in found:
            found.append(doc_id)
    return found


def expected_vs_retrieved(relevant: list[str], sources: list[dict]) -> dict | None:
    """``{"recall", "mrr", "found", "missing"}`` of the sources against the relevant documents, or None without
    relevant documents; marks each source that is a relevant document (``"relevant": true``) in place."""
    if not relevant:
        return None
    wanted = set(relevant)
    ranked: list[str] = []
    for source in sources:
        doc_id = source.get("doc_id")
        source["relevant"] = doc_id in wanted
        if doc_id and doc_id not in ranked:
            ranked.append(doc_id)
    found = [doc_id for doc_id in ranked if doc_id in wanted]
    first = next((rank for rank, doc_id in enumerate(ranked, 1) if doc_id in wanted), None)
    return {"recall": len(found) / len(wanted), "mrr": 1.0 / first if first else 0.0, "found": found,
            "missing": [doc_id for doc_id in relevant if doc_id not in found]}
