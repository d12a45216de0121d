"""The sweep grid: which settings a sweep crosses (`SweepGrid`, the YAML or TOML file format of docs/runs.md), read
from a file, a mapping or keyword overrides, and validated once before any cell runs."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..embedders.settings import Dtype, EmbedSettings
from ..evaluation.report import EvalConfig
from ..io.mappings import MappingFileError, read_mapping
from ..retrieval.registry import sweepable_retrievers
from ..scoring import parse_metric
from ..work.limits import Integer, cutoffs_problem
from ..work.options import SettingsError
from .store_grid import StoreAxis, _as_list, as_store_axis
from .table import parse_metric_column

NO_RERANK = "none"  # in `SweepGrid.reranks`: the first stage alone


def _default(name: str):
    """The default of an `EvalConfig` field: a grid's defaults are eval's."""
    return EvalConfig.model_fields[name].get_default(call_default_factory=True)


class SweepError(SettingsError):
    """A grid that cannot run; the message names the file and field when there is one (`fields`, as every
    `SettingsError`'s: ``chunk_sizes.0``, ``grid`` for the grid file itself)."""


class SweepGrid(BaseModel):
    """A sweep: one dataset and lists of settings; every combination is a cell (bm25 ignores models and stores).
    `reranks` adds a reranking stage after each retriever: ``[none, embed:e5-small-q4]`` gives every retriever
    alone and reranked; `rerank` holds the settings of every reranking cell (depth, format, model, api_key_env)."""

    model_config = ConfigDict(extra="forbid")
    grid_version: Literal[1] = 1
    dataset: str
    questions: str | None = None
    models: list[str] = Field(default_factory=lambda: [_default("model")])
    retrievers: list[str] = Field(default_factory=lambda: [_default("retriever")])
    reranks: list[str] = Field(default_factory=lambda: [NO_RERANK])
    rerank: dict = Field(default_factory=dict)  # RerankSettings values but the name, for every reranking cell
    # a store's name, or a store with option axes (runs/store_grid.py): {name: faiss, options: {ef_search: [8, 16]}}
    stores: list[str | StoreAxis] = Field(default_factory=lambda: [_default("store")])
    store_options: dict = Field(default_factory=dict)  # every store cell's options (an axis's own go over them)
    search_concurrency: Integer = Field(default_factory=lambda: _default("search_concurrency"))
    # integers as EvalConfig's (work/limits.py): a boolean is refused, not read as 1
    chunk_sizes: list[Integer] = Field(default_factory=lambda: [_default("chunk_size")])
    chunk_overlaps: list[Integer] = Field(default_factory=lambda: [_default("chunk_overlap")])
    ks: list[Integer] = Field(default_factory=lambda: _default("ks"))
    granularity: str = Field(default_factory=lambda: _default("granularity"))
    rel_level: Integer = Field(default_factory=lambda: _default("rel_level"))
    primary: str = "recall@5"
    embed: dict = Field(default_factory=dict)  # EmbedSettings values for every model (API endpoint, prefixes, ...)
    # the precisions of the local models (EmbedSettings.dtype): one cell per model and dtype; a model that takes no
    # dtype (an API, hashing, e5-small-q4, an @int8 variant) runs once, in its own precision
    embed_dtypes: list[Dtype] = Field(default_factory=lambda: [EmbedSettings.model_fields["dtype"].default])
    fusion: dict = Field(default_factory=dict)  # options of the hybrid cells: fusion, rrf_k, alpha, candidates
    # retriever options, each given to every retriever of the grid that takes it (k1 to bm25 and hybrid cells)
    retriever_options: dict = Field(default_factory=dict)

    @field_validator("models", "retrievers", "reranks", "stores", "chunk_sizes", "chunk_overlaps", "embed_dtypes",
                     mode="before")
    @classmethod
    def _scalar_is_a_list_of_one(cls, value):
        return _as_list(value)

    @field_validator("stores", mode="before")
    @classmethod
    def _store_axes(cls, stores):
        """A mapping entry is a store with option axes; its problems are named as ``stores.<i>.<field>``."""
        return [as_store_axis(entry, i) for i, entry in enumerate(_as_list(stores))]

    @field_validator("ks", mode="before")
    @classmethod
    def _ks_from_text(cls, value):
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return _as_list(value)

    @field_validator("ks")
    @classmethod
    def _bounded_ks(cls, ks):
        problem = cutoffs_problem(ks) if ks else None  # an empty list is refused with the other lists
        if problem is not None:
            raise ValueError(problem)
        return sorted(set(ks))

    @field_validator("retrievers")
    @classmethod
    def _known_retrievers(cls, retrievers):
        sweepable = sweepable_retrievers()
        for name in retrievers:
            if name not in sweepable:
                raise ValueError(f"retriever {name!r} cannot be swept (it calls something outside ragretrieval); "
                                 f"sweepable: {', '.join(sweepable)}")
        return retrievers

    @field_validator("primary")
    @classmethod
    def _known_metric(cls, primary):
        parse_metric_column(primary)
        return primary

    @model_validator(mode="after")
    def _consistent(self):
        for name in ("models", "retrievers", "reranks", "stores", "chunk_sizes", "chunk_overlaps", "ks",
                     "embed_dtypes"):
            if not getattr(self, name):
                raise ValueError(f"{name} must not be empty")
        if "dtype" in self.embed:
            raise ValueError("embed holds the settings every model shares; the dtypes go in embed_dtypes")
        if "name" in self.rerank:
            raise ValueError(f"rerank holds the settings of every reranker (depth, format, model, api_key_env); "
                             f"the names go in reranks (with {NO_RERANK!r} for no reranking)")
        if self.rerank and set(self.reranks) == {NO_RERANK}:
            raise ValueError(f"rerank settings apply to no cell: reranks is [{NO_RERANK!r}]")
        cutoff = parse_metric(parse_metric_column(self.primary)[1]).k
        if cutoff is None or cutoff not in self.ks:
            raise ValueError(f"primary metric {self.primary!r} needs its cutoff in ks {self.ks}")
        return self


def read_grid(path, overrides: dict | None = None) -> SweepGrid:
    """Read a YAML or TOML grid file; `overrides` (from the command line) replace its fields. A relative
    ``dataset``/``questions`` path in the file is relative to the file's folder."""
    data: dict = {}
    if path is not None:
        path = Path(path)
        data = _file_fields(path)
    given = {k: v for k, v in (overrides or {}).items() if v not in (None, (), [])}
    return validated_grid({**data, **given}, path, given)


def validated_grid(data: dict, path=None, given=()) -> SweepGrid:
    """`data` as a `SweepGrid`; a bad value raises `SweepError` naming the field, and the file `path` it came from
    unless the field is one of `given` (laid over the file: the command line's options)."""
    try:
        return SweepGrid.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "grid"
        in_file = path is not None and str(first["loc"][0] if first["loc"] else "") not in given
        source = f"{path}: " if path is not None else ""
        message = first["msg"].removeprefix("Value error, ")
        if not first["loc"]:  # a check across fields (`_consistent`): its message starts with the field at fault
            named = message.split(" ", 1)[0]
            raise SweepError(f"{source}{message}", [named if named in SweepGrid.model_fields else where]) from None
        raise SweepError(f"{source}field '{where}': {message}", [where], source=path if in_file else None) from None


def as_grid(grid, overrides: dict | None = None) -> SweepGrid:
    """A grid given as a `SweepGrid`, a dict of its fields or a grid file, with `overrides` laid over it as given
    (an empty list is refused, not skipped: only the command line leaves out the options it was not given)."""
    if isinstance(grid, (str, Path)):
        return read_grid(grid) if not overrides else validated_grid({**_file_fields(Path(grid)), **overrides}, grid,
                                                                    overrides)
    if isinstance(grid, SweepGrid):
        return validated_grid({**grid.model_dump(exclude_unset=True), **(overrides or {})}) if overrides else grid
    if isinstance(grid, dict):
        return validated_grid({**grid, **(overrides or {})})
    raise SweepError(f"grid must be a SweepGrid, a dict of its fields or a grid file; got {type(grid).__name__}",
                     ["grid"])


def _file_fields(path: Path) -> dict:
    """A grid file's fields, its relative ``dataset``/``questions`` paths made relative to the file's folder."""
    try:
        data = read_mapping(path, "grid file")
    except MappingFileError as error:
        raise SweepError(str(error), ["grid"]) from None
    for key in ("dataset", "questions"):
        if isinstance(data.get(key), str) and not Path(data[key]).is_absolute():
            data[key] = str(path.parent / data[key])
    return data
