"""LLM question generation: the per-document builder and its journal (generate.py), the filters that drop weak
questions (filters.py), and the entry point `build-dataset` calls (build.py)."""

from ... import moved_names

__getattr__ = moved_names(__name__, f"{__name__}.generate")
