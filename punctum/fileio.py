"""Atomic file writes: a temporary file beside the target, fsync, then one rename.

    with atomic_writer("out/result.txt") as handle:
        handle.write(text)

A reader sees the old file or the complete new one, never a partial file, whatever kills
the writer; on an error inside the block the temporary file is removed and the target left
as it was.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import unicodedata
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

TEMP_SUFFIX = ".punctum-tmp"


def printable(message: str) -> str:
    """A message that prints as one line: control characters and line separators are
    escaped as Python writes them ("a\\nb.txt" for a file name holding a newline)."""
    return "".join(repr(char)[1:-1] if unicodedata.category(char) in ("Cc", "Zl", "Zp")
                   else char for char in message)


class NotUtf8Error(ValueError):
    """Input bytes that are not UTF-8; the message names the file and line. Commands with
    an --errors option add that it can substitute them."""


def standard_stream(target: str | Path) -> IO[str] | None:
    """sys.stdout or sys.stderr when `target` names one of them ("-", /dev/stdout,
    /dev/stderr), else None: written through the stream, never reopened or replaced, so
    that the file a shell redirected it to keeps what came before and after."""
    import sys

    text = str(target)
    path = text if text == "-" else os.path.abspath(text)
    if path in ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        return sys.stdout
    if path in ("/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"):
        return sys.stderr
    return None


def temporary_name(target: str | Path) -> str:
    """A hidden, unique temporary path in the target's folder."""
    target = str(target)
    folder, name = os.path.split(os.path.abspath(target))
    return os.path.join(folder, f".{name}.{uuid.uuid4().hex[:8]}{TEMP_SUFFIX}")


@contextlib.contextmanager
def atomic_writer(target: str | Path, binary: bool = False,
                  compress: bool | None = None) -> Iterator[IO]:
    """A handle onto a temporary file that replaces `target` when the block ends cleanly.

    Args:
        target: the final path (its folder is created when missing).
        binary: a bytes handle instead of UTF-8 text (newlines written as given).
        compress: gzip the content (default: when target ends in .gz).
    """
    target = os.path.realpath(target)  # a symbolic link keeps pointing at the new file
    make_folder(os.path.dirname(target), target)
    compress = target.lower().endswith(".gz") if compress is None else compress
    temp = temporary_name(target)
    try:
        # os.open with 0o666 gives the file the umask's permissions (mkstemp would give 0o600)
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as error:  # name the file asked for, not the hidden temporary one
        raise type(error)(error.errno, f"cannot write it ({error.strerror})", target) from None
    try:
        with open(descriptor, "wb") as raw:
            stream = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if compress else raw
            with stream if compress else contextlib.nullcontext(stream):
                if binary:
                    yield stream
                else:
                    text = _text(stream)
                    yield text
                    text.flush()
                    text.detach()
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temp)
        raise


def make_folder(folder: str, target: str) -> None:
    """Create `folder` (for the file `target`) and its parents; an OSError that says which
    part of the path is a file when one is."""
    try:
        os.makedirs(folder, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as error:
        part = folder
        while part and not os.path.exists(part):
            part = os.path.dirname(part)
        blocker = part if part and not os.path.isdir(part) else folder
        raise NotADirectoryError(error.errno, f"cannot write {target}: {blocker} is a file, "
                                 f"not a folder") from None


def _text(stream) -> IO[str]:
    import io

    return io.TextIOWrapper(stream, encoding="utf-8", newline="", write_through=True)


def remove_stale(target: str | Path) -> int:
    """Remove temporary files that killed writers of `target` left; returns how many."""
    folder, name = os.path.split(os.path.realpath(target))
    removed = 0
    for entry in os.listdir(folder):
        if entry.startswith(f".{name}.") and entry.endswith(TEMP_SUFFIX):
            with contextlib.suppress(OSError):
                os.remove(os.path.join(folder, entry))
                removed += 1
    return removed
