"""Real small disks for tests of what a command does when the disk refuses a write: a tmpfs mounted on a folder
(mounting needs root, which the test machines have; elsewhere the test is skipped, saying so), and `fill`, which
writes zeros until the kernel answers ENOSPC, as a full disk does."""

from __future__ import annotations

import errno
import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def tmpfs(folder: Path, size: str = "512k"):
    """A tmpfs of `size` mounted on `folder` for the block (unmounted after it)."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to make a real small disk (needs root): {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(folder: Path) -> Path:
    """Write zeros into `folder`/filler until the disk says it is full (ENOSPC); returns the filler (unlink it to
    make room again)."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as error:
        assert error.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler
