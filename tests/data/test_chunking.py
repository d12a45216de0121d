"""The Markdown chunker: exact slices of the parent, sizes, overlap, heading paths, ids, determinism, bad settings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragretrieval.data.chunking import ChunkingError, ChunkPolicy, chunk_corpus, chunk_document, chunks_fingerprint
from ragretrieval.data.corpus import Document, load_corpus

RECIPE = ("# 红烧肉的做法\n\n简介。\n\n## 必备原料和工具\n\n- 五花肉\n- 冰糖\n\n## 操作\n\n" + "切块焯水炒糖色" * 20
          + "\n\n### 收汁\n\n大火收汁。\n")


def test_chunks_of_a_recipe_exactly():
    doc = Document("meat_dish/红烧肉.md", "红烧肉的做法", RECIPE)
    chunks = chunk_document(doc, ChunkPolicy(size=60, overlap=10))
    assert [(c.chunk_id, c.parent_id, c.start, c.end, c.heading_path) for c in chunks] == [
        # the intro and the short ingredients section fit in one chunk together
        ("meat_dish/红烧肉.md#0", "meat_dish/红烧肉.md", 0, 37, ("红烧肉的做法",)),
        # the long 操作 section is cut by size; each cut starts 10 characters before the previous one ends
        ("meat_dish/红烧肉.md#1", "meat_dish/红烧肉.md", 39, 99, ("红烧肉的做法", "操作")),
        ("meat_dish/红烧肉.md#2", "meat_dish/红烧肉.md", 89, 149, ("红烧肉的做法", "操作")),
        ("meat_dish/红烧肉.md#3", "meat_dish/红烧肉.md", 139, 186, ("红烧肉的做法", "操作")),
        ("meat_dish/红烧肉.md#4", "meat_dish/红烧肉.md", 188, 201, ("红烧肉的做法", "操作", "收汁")),
    ]
    assert chunks[0].text == "# 红烧肉的做法\n\n简介。\n\n## 必备原料和工具\n\n- 五花肉\n- 冰糖"
    assert chunks[4].text == "### 收汁\n\n大火收汁。"
    assert all(c.text == RECIPE[c.start:c.end] for c in chunks)


def test_a_cut_prefers_a_line_end_then_a_sentence_end():
    lines = "第一行的内容比较长一些\n" * 6  # 12 characters per line
    doc = Document("a.md", "a", lines)
    assert [(c.start, c.end) for c in chunk_document(doc, ChunkPolicy(size=30, overlap=5))][:2] == [(0, 23), (19, 47)]
    # 6 characters per sentence, no line ends: the last sentence end in the second half of the window
    doc = Document("b.md", "b", "这是一句话。" * 10)
    assert [(c.start, c.end) for c in chunk_document(doc, ChunkPolicy(size=20, overlap=4))][:2] == [(0, 18), (14, 30)]


def test_headings_inside_code_fences_do_not_split():
    text = "# 标题\n\n```\n# 不是标题\n```\n\n## 小节\n\n内容。\n"
    chunks = chunk_document(Document("c.md", "标题", text), ChunkPolicy(size=12, overlap=0))
    assert list(dict.fromkeys(c.heading_path for c in chunks)) == [("标题",), ("标题", "小节")]


markdown_docs = st.lists(
    st.one_of(
        st.builds(lambda level, title: "#" * level + " " + title + "\n", st.integers(1, 4),
                  st.text("菜汤鱼肉做法abc ", min_size=1, max_size=8).map(str.strip).filter(bool)),
        st.text("红烧肉排骨汤。，！\n 　abc", min_size=0, max_size=400),
        st.just("```\n# 代码\n```\n"),
    ),
    min_size=1, max_size=12,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(text=markdown_docs, size=st.integers(1, 200), overlap_share=st.floats(0, 0.95))
def test_every_chunk_is_a_slice_no_longer_than_the_size_and_all_text_is_covered(text, size, overlap_share):
    overlap = min(size - 1, int(size * overlap_share))
    doc = Document("d/x.md", "x", text)
    chunks = chunk_document(doc, ChunkPolicy(size, overlap))
    covered = set()
    for i, chunk in enumerate(chunks):
        assert chunk.text == text[chunk.start:chunk.end]
        assert 0 < chunk.end - chunk.start <= size
        assert chunk.chunk_id == f"d/x.md#{i}" and chunk.parent_id == "d/x.md"
        assert not chunk.text[0].isspace() and not chunk.text[-1].isspace()
        covered.update(range(chunk.start, chunk.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    assert chunk_document(doc, ChunkPolicy(size, overlap)) == chunks


def test_overlap_is_honoured_between_consecutive_cuts():
    text = "# 长段落\n\n" + "甲乙丙丁戊己庚辛壬癸" * 30  # no line or sentence ends: cuts land exactly at the size
    for size, overlap in ((50, 0), (50, 10), (80, 70)):
        chunks = chunk_document(Document("p.md", "p", text), ChunkPolicy(size, overlap))
        for previous, current in zip(chunks, chunks[1:]):
            assert current.start == previous.end - overlap
        assert chunks[-1].end == len(text)


def test_the_same_corpus_and_settings_give_the_same_chunks_and_ids(demo_corpus):
    first = chunk_corpus(load_corpus(demo_corpus).documents, ChunkPolicy(300, 50))
    again = chunk_corpus(load_corpus(demo_corpus).documents, ChunkPolicy(300, 50))
    assert first == again
    assert chunks_fingerprint(first) == chunks_fingerprint(again)
    assert len({c.chunk_id for c in first}) == len(first)
    other = chunk_corpus(load_corpus(demo_corpus).documents, ChunkPolicy(200, 50))
    assert chunks_fingerprint(other) != chunks_fingerprint(first)


def test_policy_key_names_the_settings():
    assert ChunkPolicy().key == "markdown:size=300:overlap=50"
    assert ChunkPolicy(500, 0).key == "markdown:size=500:overlap=0"


@pytest.mark.parametrize("size, overlap, message", [
    (0, 0, "chunk_size must be positive, got 0"),
    (-5, 0, "chunk_size must be positive, got -5"),
    (100, 100, "chunk_overlap must be >= 0 and smaller than chunk_size (100), got 100"),
    (100, -1, "chunk_overlap must be >= 0 and smaller than chunk_size (100), got -1"),
])
def test_bad_size_or_overlap_is_an_error(size, overlap, message):
    with pytest.raises(ChunkingError) as error:
        ChunkPolicy(size, overlap)
    assert str(error.value) == message


def test_heading_titles_lose_their_line_end_and_only_spaces_and_tabs():
    """CRLF files give the same titles as LF ones; as in CommonMark, only spaces and tabs around a title are dropped
    (an ideographic space or a trailing X is part of it)."""
    for newline in ("\n", "\r\n"):
        text = newline.join(["# 汤X", "正文。", "## 做法\u3000", "步骤。", "### 收汁 \t##", "大火。", ""])
        paths = [c.heading_path for c in chunk_document(Document("h.md", "h", text), ChunkPolicy(8, 0))]
        assert list(dict.fromkeys(paths)) == [("汤X",), ("汤X", "做法\u3000"), ("汤X", "做法\u3000", "收汁")]


def test_the_fingerprint_is_sha256_over_ids_and_offsets():
    import hashlib

    chunks = chunk_document(Document("f.md", "f", RECIPE), ChunkPolicy(60, 10))
    digest = hashlib.sha256("".join(f"{c.chunk_id}\0{c.start}\0{c.end}\0" for c in chunks).encode("utf-8"))
    assert chunks_fingerprint(chunks) == "sha256:" + digest.hexdigest()
