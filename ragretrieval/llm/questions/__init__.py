"""LLM question generation: the per-document builder and its journal (generate.py), the filters that drop weak
questions (filters.py), and the entry point `build-dataset` calls (build.py)."""
