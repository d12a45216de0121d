"""The Markdown chunker against a reference chunker written character by character, on documents whose section
boundaries the test knows because it wrote them.

Sections are drawn so that a section often makes its group exactly `size` characters long, one more, or one less:
the merge rule "a section joins the group before it when the joined text is at most `size` characters" is tested
at its edge, where the exactly-`size` bug an earlier version had lives.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragretrieval.data.chunking import ChunkPolicy, chunk_document
from ragretrieval.data.corpus import Document

SENTENCE_ENDS = "。！？；.!?;"
BODY = "ab汤 \n。.;x"  # no '#', no fence characters, no exotic line breaks: only the headings the test writes
FENCE = "```\n# 不是标题\n```\n"


@dataclass(frozen=True)
class Section:
    start: int
    end: int
    path: tuple[str, ...]


def lines(least: int, most: int):
    """Text that ends with a line break when it is not empty, so the heading after it starts a line."""
    return st.text(BODY, min_size=least, max_size=most).map(lambda t: t[:-1] + "\n" if t else t)


@st.composite
def documents(draw):
    """(text, policy, sections): the sections as the text was built, whitespace-only ones left out."""
    size = draw(st.integers(6, 60))
    policy = ChunkPolicy(size, draw(st.integers(0, size - 1)))
    text, sections, stack = "", [], []
    preamble = draw(lines(0, size))
    if preamble:
        text = preamble
        if preamble.strip():
            sections.append(Section(0, len(text), ()))
    group_start = sections[0].start if sections else None
    for _ in range(draw(st.integers(0, 6))):
        level = draw(st.integers(1, 3))
        title = draw(st.sampled_from(["汤", "做法", "a b", "x"]))
        stack = [(lv, t) for lv, t in stack if lv < level] + [(level, title)]
        heading = "#" * level + " " + title + "\n"
        fence = FENCE if draw(st.integers(0, 4)) == 0 else ""
        least = len(heading) + len(fence)
        start = len(text)
        # lengths at the merge edge: the group so far plus this section is exactly size, one over, one under
        edge = [] if group_start is None else [policy.size - (start - group_start) + delta for delta in (0, 1, -1)]
        free = st.integers(least, max(least, 3 * policy.size))
        wanted = draw(st.one_of(st.sampled_from(edge), free) if edge else free)
        length = max(least, wanted)
        body = draw(lines(length - least, length - least))
        text += heading + fence + body
        sections.append(Section(start, len(text), tuple(t for _, t in stack)))
        group_start = start if group_start is None or len(text) - group_start > policy.size else group_start
    return text, policy, sections


def reference_groups(sections: list[Section], size: int) -> list[Section]:
    """Greedy merge: a section joins the group before it when the group then spans at most `size` characters."""
    groups: list[Section] = []
    for section in sections:
        if groups and section.end - groups[-1].start <= size:
            groups[-1] = Section(groups[-1].start, section.end, groups[-1].path)
        else:
            groups.append(section)
    return groups


def reference_windows(text: str, start: int, end: int, policy: ChunkPolicy) -> list[tuple[int, int]]:
    """Cut a long group: each window ends at the last line end in the second half of its `size` characters, else at
    the last sentence end there, else at `size`; the next window starts `overlap` characters back (always moving)."""
    windows = []
    while end - start > policy.size:
        limit, floor = start + policy.size, start + policy.size // 2
        in_half = range(limit - 1, floor - 1, -1)
        cut = next((i + 1 for i in in_half if text[i] == "\n"), None)
        if cut is None:
            cut = next((i + 1 for i in in_half if text[i] in SENTENCE_ENDS), limit)
        windows.append((start, cut))
        start = max(cut - policy.overlap, start + 1)
    windows.append((start, end))
    return windows


def reference_chunks(text: str, policy: ChunkPolicy, sections: list[Section]) -> list[tuple]:
    chunks = []
    for group in reference_groups(sections, policy.size):
        for lo, hi in reference_windows(text, group.start, group.end, policy):
            while lo < hi and text[lo].isspace():
                lo += 1
            while hi > lo and text[hi - 1].isspace():
                hi -= 1
            if hi > lo:
                chunks.append((f"doc.md#{len(chunks)}", "doc.md", lo, hi, group.path, text[lo:hi]))
    return chunks


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
@settings(max_examples=300, deadline=None)
@given(documents())
def test_chunks_equal_the_reference_and_keep_every_promise(drawn):
    text, policy, sections = drawn
    chunks = chunk_document(Document("doc.md", "doc", text), policy)
    assert [(c.chunk_id, c.parent_id, c.start, c.end, c.heading_path, c.text) for c in chunks] == \
        reference_chunks(text, policy, sections)

    covered = set()
    for chunk in chunks:
        assert 0 < chunk.end - chunk.start <= policy.size
        assert chunk.text == text[chunk.start : chunk.end]
        covered.update(range(chunk.start, chunk.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace()), "a character is in no chunk"

    groups = reference_groups(sections, policy.size)
    for group in groups:
        mine = [c for c in chunks if group.start <= c.start and c.end <= group.end]
        for before, after in zip(mine, mine[1:]):
            # trimming may leave two cuts starting at the same character, never going back
            assert before.start <= after.start and before.end - after.start <= policy.overlap
        if group.end - group.start <= policy.size:
            assert len(mine) == 1, "a group that fits is one chunk"
    # merged exactly when they fit: a section joins the group before it (and shares its chunk) when the group then
    # spans at most `size` characters; otherwise no chunk crosses its first character
    group_start = sections[0].start if sections else 0
    for after in sections[1:]:
        fits = after.end - group_start <= policy.size
        crossing = any(c.start < after.start < c.end for c in chunks)
        assert crossing == fits, f"section at {after.start}: fits={fits}, shares a chunk with the one before={crossing}"
        if not fits:
            group_start = after.start


def test_two_sections_exactly_the_chunk_size_together_are_one_chunk():
    text = "# a\nbbbb\n" + "# c\ndddd\n"  # 9 + 9 characters
    one = chunk_document(Document("e.md", "e", text), ChunkPolicy(18, 0))
    assert [(c.start, c.end, c.heading_path) for c in one] == [(0, 17, ("a",))]
    two = chunk_document(Document("e.md", "e", text), ChunkPolicy(17, 0))
    assert [(c.start, c.end, c.heading_path) for c in two] == [(0, 8, ("a",)), (9, 17, ("c",))]
