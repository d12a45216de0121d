"""Vector stores: built-in `faiss` (default) and `numpy` (exact reference); more through the entry-point group
``ragretrieval.stores`` (see adapters/)."""

from __future__ import annotations

from importlib.metadata import entry_points

from ..work.options import plugin_options
from .base import DEFAULT_STORE, Records, SearchResult, StoreError, VectorStore
from .faiss_store import FaissStore
from .numpy_store import NumpyStore

ENTRY_POINT_GROUP = "ragretrieval.stores"
BUILT_IN = {"faiss": FaissStore, "numpy": NumpyStore}
# engine stores published from adapters/: store name -> the distribution to install
ADAPTER_PACKAGES = {name: f"ragretrieval-{name}" for name in ("milvus", "qdrant", "chroma", "lancedb")}


def available_stores() -> dict[str, str]:
    """Store name -> where it comes from (built in, or the distribution that provides it)."""
    found = {name: "built in" for name in BUILT_IN}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.dist.name if ep.dist else ep.value)
    return found


def store_class(name: str):
    if name in BUILT_IN:
        return BUILT_IN[name]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.load()
    installed = ", ".join(sorted(available_stores()))
    if name in ADAPTER_PACKAGES:
        raise StoreError(f"store {name!r} is not installed; pip install {ADAPTER_PACKAGES[name]} "
                         f"(from a source checkout: pip install -e adapters/{name}). Installed: {installed}")
    raise StoreError(f"unknown store {name!r}; installed: {installed}. Engine stores come as packages: "
                     + ", ".join(f"{store} ({package})" for store, package in ADAPTER_PACKAGES.items()))


def make_store(name: str = DEFAULT_STORE, **options) -> VectorStore:
    """A store by name; its options are checked against the store's `Options` model when it declares one."""
    cls = store_class(name)
    options = plugin_options(getattr(cls, "Options", None), options, f"store {name}", "store_options")
    try:
        return cls(**options)
    except TypeError as error:
        raise StoreError(f"bad option for store {name!r}: {error}") from None


__all__ = ["ADAPTER_PACKAGES", "BUILT_IN", "DEFAULT_STORE", "ENTRY_POINT_GROUP", "FaissStore", "NumpyStore", "Records",
           "SearchResult", "StoreError", "VectorStore", "available_stores", "make_store", "store_class"]
