"""Reading what an agent made from a privileged process: bounded, non-blocking, never a link.

Everything a root worker reads from an agent's world (the files a verifier checks, the shell's
cwd report, a command's output) goes through this module, because each ordinary way of reading
is a hole when the bytes and the names are the agent's:

- ``open()`` follows links: a planted ``report.txt -> /etc/shadow``, or a folder swapped for a
  link between a check and the open, hands root's view to the agent. Here every component is
  opened with ``O_NOFOLLOW`` from a trusted folder's descriptor (``beneath``), so a link anywhere
  on the way is an error, ``..`` is refused, and every folder on the way must be on the trusted
  folder's filesystem (no mount of the agent's can redirect the walk).
- ``open()`` of a FIFO waits for a writer for ever, and ``read()`` of one fed by a background
  writer never ends. Files are opened ``O_NONBLOCK`` and checked with ``fstat`` on the open
  descriptor: regular files only (no FIFO, socket or device), whatever the name was a moment ago.
- ``read_text()`` reads everything: a size cap refuses (:func:`read`) or cuts (:func:`head`) a
  file larger than the caller needs, a deadline bounds the time, and a folder walk
  (:func:`tree`) stops at a number of entries.

Errors are ``OSError``s (``TooLarge`` is one), so a caller that treats "cannot be read" as the
agent's doing (a failed check, an empty report) needs no new case.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TypeAlias

#: a path as the callers hold it
StrPath: TypeAlias = str | os.PathLike[str]
#: how long one read may take (a regular file on a local filesystem takes milliseconds)
READ_TIMEOUT_S = 5.0
CHUNK = 1 << 20
#: folders deeper than this are not walked (a descriptor walk is not bounded by PATH_MAX)
MAX_DEPTH = 64
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


class TooLarge(OSError):
    """The file (or folder) holds more than the reader accepts."""

    def __init__(self, what: str, limit: int, unit: str = "bytes") -> None:
        super().__init__(errno.EFBIG, f"larger than the {limit} {unit} a check reads", what)


def _parts(rel: StrPath) -> list[str]:
    parts = [p for p in PurePosixPath(os.fspath(rel)).parts if p not in ("/", ".")]
    if ".." in parts:
        raise PermissionError(errno.EACCES, "'..' is not followed", os.fspath(rel))
    return parts


def _open(path: StrPath, beneath: StrPath | None, last: int) -> int:
    """An fd on ``path`` opened with ``last`` flags, no link followed on the way (see above).
    Without ``beneath`` the folders of ``path`` are the caller's own (trusted); only its last
    component is the agent's."""
    if beneath is None:
        return os.open(path, last | os.O_NOFOLLOW)
    root = os.open(beneath, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        parts = _parts(Path(path).relative_to(beneath) if Path(path).is_absolute() else path)
    except ValueError:
        os.close(root)
        raise PermissionError(errno.EACCES, "not inside the folder", os.fspath(path)) from None
    if not parts:
        return root if last & os.O_DIRECTORY or last & os.O_PATH else _refuse(root, path)
    dev, fd = os.fstat(root).st_dev, root
    try:
        for name in parts[:-1]:
            child = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = child
            if os.fstat(fd).st_dev != dev:
                raise PermissionError(errno.EXDEV, "leaves the folder's filesystem", str(path))
        found = os.open(parts[-1], last | os.O_NOFOLLOW, dir_fd=fd)
    finally:
        os.close(fd)
    if os.fstat(found).st_dev != dev:
        os.close(found)
        raise PermissionError(errno.EXDEV, "leaves the folder's filesystem", str(path))
    return found


def _refuse(fd: int, path: StrPath) -> int:
    os.close(fd)
    raise IsADirectoryError(errno.EISDIR, "a folder, not a file", os.fspath(path))


def open_regular(path: StrPath, *, beneath: StrPath | None = None) -> int:
    """A read-only fd on the regular file ``path`` (the caller closes it); a link, FIFO,
    socket, device or folder is an OSError, and opening never blocks."""
    fd = _open(path, beneath, _FILE)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, socket or device)"
        raise OSError(errno.EINVAL, kind, os.fspath(path))
    return fd


def chunks(
    path: StrPath, limit: int, *, beneath: StrPath | None = None, timeout_s: float = READ_TIMEOUT_S
) -> Iterator[bytes]:
    """The file's bytes in chunks; TooLarge once more than ``limit`` bytes are seen (by fstat
    first, then as read: the file may grow meanwhile), TimeoutError after ``timeout_s``."""
    fd = open_regular(path, beneath=beneath)
    try:
        if os.fstat(fd).st_size > limit:
            raise TooLarge(os.fspath(path), limit)
        deadline, seen = time.monotonic() + timeout_s, 0
        while chunk := os.read(fd, min(CHUNK, limit + 1 - seen)):
            seen += len(chunk)
            if seen > limit:
                raise TooLarge(os.fspath(path), limit)
            if time.monotonic() > deadline:
                raise TimeoutError(errno.ETIMEDOUT, "reading took too long", os.fspath(path))
            yield chunk
    finally:
        os.close(fd)


def read(
    path: StrPath, limit: int, *, beneath: StrPath | None = None, timeout_s: float = READ_TIMEOUT_S
) -> bytes:
    """The whole file, if it holds at most ``limit`` bytes (else TooLarge)."""
    return b"".join(chunks(path, limit, beneath=beneath, timeout_s=timeout_s))


def head(
    path: StrPath, limit: int, *, beneath: StrPath | None = None, timeout_s: float = READ_TIMEOUT_S
) -> tuple[bytes, bool]:
    """The file's first ``limit`` bytes, and whether it holds more (a report cut, not refused)."""
    fd = open_regular(path, beneath=beneath)
    try:
        deadline, out, want = time.monotonic() + timeout_s, [], limit + 1
        while want > 0 and (chunk := os.read(fd, min(CHUNK, want))):
            out.append(chunk)
            want -= len(chunk)
            if time.monotonic() > deadline:
                break
    finally:
        os.close(fd)
    data = b"".join(out)
    return data[:limit], len(data) > limit


def lstat(path: StrPath, *, beneath: StrPath | None = None) -> os.stat_result:
    """The stat of ``path`` itself (a link's own, not its target's), reached without
    following a link on the way; never opens the file for reading (a FIFO does not block)."""
    fd = _open(path, beneath, os.O_PATH | os.O_CLOEXEC)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def tree(
    path: StrPath, limit: int, *, beneath: StrPath | None = None, timeout_s: float = READ_TIMEOUT_S
) -> list[str]:
    """The paths under the folder ``path``, relative to it, folders ending with ``/``; links
    are listed, never followed; TooLarge past ``limit`` entries or ``MAX_DEPTH`` levels."""
    deadline = time.monotonic() + timeout_s
    out: list[str] = []

    def walk(fd: int, prefix: str, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise TooLarge(os.fspath(path), MAX_DEPTH, "levels of folders")
        with os.scandir(fd) as entries:
            found = list(entries)
        for entry in found:
            if len(out) >= limit:
                raise TooLarge(os.fspath(path), limit, "entries")
            if time.monotonic() > deadline:
                raise TimeoutError(errno.ETIMEDOUT, "listing took too long", os.fspath(path))
            if entry.is_dir(follow_symlinks=False):
                out.append(f"{prefix}{entry.name}/")
                child = os.open(entry.name, _DIR, dir_fd=fd)
                try:
                    walk(child, f"{prefix}{entry.name}/", depth + 1)
                finally:
                    os.close(child)
            else:
                out.append(prefix + entry.name)

    top = _open(path, beneath, _DIR)
    try:
        walk(top, "")
    finally:
        os.close(top)
    return sorted(out)
