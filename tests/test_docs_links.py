"""Every relative link in README.md and docs/ (the answers pages included) names a file that is there, and every
``#anchor`` a heading of that file (GitHub's slugs); the documentation speaks of the product, not of how it was
planned."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def prose(path: Path) -> list[str]:
    """The lines outside code blocks."""
    lines, fence = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            lines.append(line)
    return lines


def anchors(path: Path) -> set[str]:
    found = set()
    for line in prose(path):
        if heading := re.match(r"#{1,6} (.*)", line):
            found.add(re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_and_anchor_resolves(page):
    broken = []
    for line in prose(page):
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            file = (page.parent / file_part).resolve() if file_part else page
            if not file.exists():
                broken.append(f"{target}: no file {file_part}")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert not broken, broken


def test_the_answers_pages_each_start_with_a_runnable_example():
    for page in sorted((ROOT / "docs" / "answers").glob("*.md")):
        body = page.read_text(encoding="utf-8")
        first = re.search(r"^## (.*)", body, re.M)
        assert first and "example" in first.group(1).lower(), page.name
        assert re.search(r"^```(bash|python)$", body.split(first.group(0), 1)[1].split("\n## ", 1)[0], re.M), page.name


PLANNING = re.compile(r"\bthe issue\b|\bissue [A-Z]\w*\b|\(issue\b|\bitems? \d+\)|\([A-Z]\d\)|\b[KRUW][1-4] item\b")


def test_the_docs_speak_of_the_product_not_of_its_planning():
    found = [f"{path.relative_to(ROOT)}: {line.strip()}" for path in [*PAGES, *sorted((ROOT / "ragretrieval").rglob("*.py"))]
             for line in path.read_text(encoding="utf-8").splitlines() if PLANNING.search(line)]
    assert not found
