"""Where the read-only shared data lives: ``shared/`` beside the repository (``/work/main`` -> ``/work/shared``) or
beside the folder of worktrees that holds it (``/work/wt/answers`` -> ``/work/shared``)."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = next((p / "shared" for p in (REPO_ROOT.parent, REPO_ROOT.parent.parent) if (p / "shared").is_dir()),
              REPO_ROOT.parent / "shared")
RAG_IFEVAL = SHARED / "data" / "rag-ifeval"
