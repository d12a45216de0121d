"""The corpus: ids, titles, bad files skipped with a reason (or refused under --strict), the fingerprint."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.corpus import CorpusError, SkippedFile, load_corpus

NOBODY = 65534


def write(root: Path, files: dict[str, bytes | str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
    return root


@pytest.fixture
def bad_corpus(tmp_path) -> Path:
    """Two good documents and one bad file of each kind the corpus must survive."""
    root = write(tmp_path / "dishes", {
        "meat_dish/红烧肉/简易红烧肉.md": "# 简易红烧肉的做法\n\n五花肉切块。\n",
        "soup/紫菜汤.md": "紫菜放进开水里。\n",
        "soup/乱码.md": "紫菜".encode("gbk"),
        "soup/空白.md": "  \n\n\t\n",
        "soup/图片.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    })
    (root / "soup" / "断链.md").symlink_to(root / "soup" / "不存在.md")  # listed, but cannot be opened
    return root


def test_ids_are_posix_relative_paths_sorted_and_titles_come_from_the_first_h1(tmp_path):
    root = write(tmp_path, {
        "meat_dish/红烧肉/简易红烧肉.md": "intro\n\n# 简易红烧肉的做法\n\n# 第二个标题\n",
        "soup/紫菜汤.md": "```\n# 代码里的井号不是标题\n```\n没有标题的正文\n",
        "aquatic/鱼.markdown": "## 二级标题不算\n\n#   清蒸鱼 ##  \n",
        "notes.txt": "not Markdown",
        ".hidden/秘密.md": "# hidden folders are not part of the corpus\n",
    })
    corpus = load_corpus(root)
    assert [(d.id, d.title) for d in corpus.documents] == [
        ("aquatic/鱼.markdown", "清蒸鱼"),
        ("meat_dish/红烧肉/简易红烧肉.md", "简易红烧肉的做法"),
        ("soup/紫菜汤.md", "紫菜汤"),
    ]
    assert corpus.documents[2].text == "```\n# 代码里的井号不是标题\n```\n没有标题的正文\n"
    assert corpus.skipped == ()


def test_bad_files_are_skipped_with_a_reason(bad_corpus):
    seen: list[SkippedFile] = []
    corpus = load_corpus(bad_corpus, on_skip=seen.append)
    assert [d.id for d in corpus.documents] == ["meat_dish/红烧肉/简易红烧肉.md", "soup/紫菜汤.md"]
    assert list(corpus.skipped) == seen == [
        SkippedFile("soup/乱码.md", "not valid UTF-8 (bad byte at offset 0)"),
        SkippedFile("soup/图片.md", "binary file (contains NUL bytes)"),
        SkippedFile("soup/断链.md", "unreadable (No such file or directory)"),
        SkippedFile("soup/空白.md", "empty file"),
    ]


def test_cli_prints_one_warning_per_bad_file_and_counts_them(bad_corpus, tmp_path):
    result = CliRunner().invoke(main, ["dataset", "build", str(bad_corpus), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "warning: skipped soup/乱码.md: not valid UTF-8 (bad byte at offset 0)",
        "warning: skipped soup/图片.md: binary file (contains NUL bytes)",
        "warning: skipped soup/断链.md: unreadable (No such file or directory)",
        "warning: skipped soup/空白.md: empty file",
    ]
    assert result.stdout == f"2 documents, 2 questions, 4 files skipped -> {tmp_path / 'out'}\n"
    manifest = (tmp_path / "out" / "manifest.json").read_text(encoding="utf-8")
    assert '"path": "soup/空白.md"' in manifest and '"reason": "empty file"' in manifest


@pytest.mark.parametrize("name, content, reason", [
    ("乱码.md", "紫菜".encode("gbk"), "not valid UTF-8 (bad byte at offset 0)"),
    ("空白.md", "\n \n", "empty file"),
    ("图片.md", b"ab\x00cd", "binary file (contains NUL bytes)"),
])
def test_strict_refuses_the_first_bad_file_naming_it(tmp_path, name, content, reason):
    root = write(tmp_path / "dishes", {"a.md": "# A\n", name: content})
    with pytest.raises(CorpusError) as error:
        load_corpus(root, strict=True)
    assert str(error.value) == f"{root / name}: {reason}"
    result = CliRunner().invoke(main, ["dataset", "build", str(root), "--out", str(tmp_path / "out"), "--strict"])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {root / name}: {reason}\n"
    assert not (tmp_path / "out").exists()


@contextmanager
def as_user(uid: int):
    """Run the block with another effective user id (root reads every file, whatever its mode)."""
    os.setegid(uid)
    os.seteuid(uid)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def test_a_file_without_read_permission_is_skipped_as_unreadable():
    # a world-traversable folder, so the unprivileged user below can list it
    root = Path(tempfile.mkdtemp(prefix="ragretrieval-perm-"))
    try:
        root.chmod(0o755)
        write(root, {"a.md": "# A\n", "locked.md": "# 锁住\n"})
        (root / "locked.md").chmod(0o000)
        if os.geteuid() == 0:
            with as_user(NOBODY):
                corpus = load_corpus(root)
        else:
            corpus = load_corpus(root)
        assert [d.id for d in corpus.documents] == ["a.md"]
        assert corpus.skipped == (SkippedFile("locked.md", "unreadable (Permission denied)"),)
    finally:
        shutil.rmtree(root)


def test_a_folder_without_markdown_is_an_error(tmp_path):
    write(tmp_path / "notes", {"readme.txt": "x", "sub/data.json": "{}"})
    with pytest.raises(CorpusError, match="no Markdown"):
        load_corpus(tmp_path / "notes")
    result = CliRunner().invoke(main, ["dataset", "build", str(tmp_path / "notes"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {tmp_path / 'notes'}: no Markdown files (*.md) found\n"


def test_a_folder_whose_markdown_is_all_bad_is_an_error(tmp_path):
    root = write(tmp_path / "dishes", {"a.md": "", "b.md": b"\xff"})
    with pytest.raises(CorpusError) as error:
        load_corpus(root)
    assert str(error.value) == f"{root}: none of the 2 Markdown files could be read"


def test_a_missing_folder_is_an_error(tmp_path):
    with pytest.raises(CorpusError) as error:
        load_corpus(tmp_path / "absent")
    assert str(error.value) == f"{tmp_path / 'absent'}: not a folder"


def test_fingerprint_is_stable_and_follows_ids_and_contents(tmp_path, demo_corpus):
    first = load_corpus(demo_corpus).fingerprint
    copy = tmp_path / "copy"
    shutil.copytree(demo_corpus, copy)
    assert load_corpus(copy).fingerprint == first  # the folder's location is not part of it
    assert first.startswith("sha256:") and len(first) == len("sha256:") + 64

    recipe = copy / "staple" / "蛋炒饭.md"
    recipe.write_text(recipe.read_text(encoding="utf-8") + "一点改动\n", encoding="utf-8")
    edited = load_corpus(copy).fingerprint
    assert edited != first

    recipe.rename(copy / "staple" / "扬州炒饭.md")  # same content, another id
    assert load_corpus(copy).fingerprint not in (first, edited)


def test_demo_corpus_loads_cleanly(demo_corpus):
    corpus = load_corpus(demo_corpus, strict=True)
    assert len(corpus.documents) == 31
    assert corpus.skipped == ()
    titles = {d.id: d.title for d in corpus.documents}
    assert titles["meat_dish/红烧肉/南派红烧肉.md"] == "南派红烧肉的做法"
    assert all(600 <= len(d.text) <= 1500 for d in corpus.documents)
