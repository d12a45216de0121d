"""Every adapter test runs its vector database engine for real (a server or an embedded engine): marker `engine`,
which `make test-fast` leaves out (markers are declared in pyproject.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest

ADAPTERS = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if item.path.is_relative_to(ADAPTERS) and not item.get_closest_marker("engine"):
            item.add_marker(pytest.mark.engine)
