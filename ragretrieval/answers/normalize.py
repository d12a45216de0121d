"""Normalised text for the answer checks, with RAG-IFEval's semantics: split on ``[\\W_]+``, lower-case each word,
replace it by its lemma when the lemmatiser knows it, join with single spaces.

Lemmatisers by name (`get_lemmatizer`):

- ``none``: lower-casing only.
- ``simplemma`` or ``simplemma:LANG``: the `simplemma` package, which ships its own data for many languages.
- ``fst:PREFIX``: a benchmark's own lemmatiser, ``PREFIX.fst`` (a finite-state map from lower-cased word forms to
  lemma ids, read with `ducer`) and ``PREFIX_lemmas.bin`` (a zlib-compressed pickle of a ``dict[int, str]``). With
  RAG-IFEval's files this gives the benchmark's own numbers. The table is unpickled by an unpickler that admits no
  class or function at all, and the result must be a dict of int to str: a pickle a user hands us cannot run code.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import re
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from ..errors import RagretrievalError

WORD_SPLIT = re.compile(r"[\W_]+")


class LemmatizerError(RagretrievalError):
    """A lemmatiser that cannot be found or read."""


class Lemmatizer(Protocol):
    identity: str

    def lemma(self, word: str) -> str: ...


class NoLemmatizer:
    identity = "none"

    def lemma(self, word: str) -> str:
        return word.lower()


class SimplemmaLemmatizer:
    def __init__(self, language: str):
        import simplemma

        self.language, self._lemmatize = language, simplemma.lemmatize
        self.identity = f"simplemma:{language}"
        try:
            self._lemmatize("test", lang=language)
        except ValueError as error:
            raise LemmatizerError(f"simplemma has no language {language!r}: {error}") from None

    def lemma(self, word: str) -> str:
        lower = word.lower()
        return self._lemmatize(lower, lang=self.language).lower()


class _NoObjects(pickle.Unpickler):
    """Admits the opcodes of plain containers and scalars; any class or function reference is refused."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused to load {module}.{name}: a lemma table holds only ints and strings")


def load_lemma_table(path: Path) -> dict[int, str]:
    try:
        raw = path.read_bytes()
        data = zlib.decompress(raw) if raw[:1] == b"\x78" else raw
        table = _NoObjects(io.BytesIO(data)).load()
    except (OSError, zlib.error, pickle.UnpicklingError, EOFError, ValueError) as error:
        raise LemmatizerError(f"{path}: not a lemma table ({error})") from None
    if not isinstance(table, dict) or not all(isinstance(k, int) and isinstance(v, str) for k, v in table.items()):
        raise LemmatizerError(f"{path}: not a lemma table (expected a dict of int to str)")
    return table


class FstLemmatizer:
    def __init__(self, prefix: str):
        import ducer

        fst_path, table_path = Path(f"{prefix}.fst"), Path(f"{prefix}_lemmas.bin")
        try:
            data = fst_path.read_bytes()
        except OSError as error:
            raise LemmatizerError(f"{fst_path}: cannot read ({error.strerror or error})") from None
        try:
            self._map = ducer.Map(data)
        except Exception as error:  # ducer raises its own kinds for a file that is not an FST
            raise LemmatizerError(f"{fst_path}: not an FST map ({error})") from None
        self._lemmas = load_lemma_table(table_path)
        digest = hashlib.sha256(data)
        digest.update(table_path.read_bytes())
        self.identity = f"fst:{fst_path.name}@{digest.hexdigest()[:12]}"

    def lemma(self, word: str) -> str:
        lower = word.lower()
        found = self._map.get(lower.encode("utf-8"))
        return self._lemmas.get(found, lower) if found is not None else lower


@lru_cache(maxsize=8)
def get_lemmatizer(spec: str = "none", language: str = "pl") -> Lemmatizer:
    """``none``, ``simplemma[:LANG]`` (default: `language`) or ``fst:PREFIX``; loaded once per process."""
    name, _, argument = spec.partition(":")
    if name == "none" and not argument:
        return NoLemmatizer()
    if name == "simplemma":
        return SimplemmaLemmatizer(argument or language)
    if name == "fst" and argument:
        return FstLemmatizer(argument)
    raise LemmatizerError(f"unknown lemmatizer {spec!r}: use none, simplemma[:LANG] or fst:PREFIX")


class Normalizer:
    """Words and text of an answer or a phrase, normalised the same way; lemmas are memoised per word."""

    def __init__(self, lemmatizer: Lemmatizer | None = None):
        self.lemmatizer = lemmatizer or NoLemmatizer()
        self._cache: dict[str, str] = {}

    def lemma(self, word: str) -> str:
        found = self._cache.get(word)
        if found is None:
            found = self._cache[word] = self.lemmatizer.lemma(word)
        return found

    def words(self, text: str) -> list[str]:
        return [self.lemma(word) for word in WORD_SPLIT.split(text) if word]

    def text(self, text: str) -> str:
        return " ".join(self.words(text))
