"""Vector stores: built-in `faiss` (default) and `numpy` (exact reference); more through the entry-point group
``ragretrieval.stores`` (see adapters/). The names are `STORES`, this kind's `Registry` (work/plugins.py)."""

from __future__ import annotations

from ..errors import InputError
from ..work.options import plugin_options
from ..work.plugins import STORE_PACKAGES, STORES
from .base import DEFAULT_STORE, Records, SearchResult, StoreError, VectorStore
from .faiss_store import FaissStore
from .numpy_store import NumpyStore

ENTRY_POINT_GROUP = STORES.group
BUILT_IN = {"faiss": FaissStore, "numpy": NumpyStore}  # the classes (0.2); their entries are in work/plugins.py
ADAPTER_PACKAGES = STORE_PACKAGES  # engine stores published from adapters/: store name -> the distribution


class UnknownStoreError(StoreError, InputError):
    """A store name nothing installed answers to: the command must name another, or the store be installed (exit
    2)."""


def available_stores() -> dict[str, str]:
    """Store name -> where it comes from (built in, or the distribution that provides it)."""
    return STORES.available()


def store_class(name: str):
    found = STORES.find(name)
    if found is not None:
        return found[0].load()
    installed = ", ".join(sorted(available_stores()))
    if name in ADAPTER_PACKAGES:
        raise UnknownStoreError(f"store {name!r} is not installed; pip install {ADAPTER_PACKAGES[name]} "
                         f"(from a source checkout: pip install -e adapters/{name}). Installed: {installed}")
    raise UnknownStoreError(f"unknown store {name!r}; installed: {installed}. Engine stores come as packages: "
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
