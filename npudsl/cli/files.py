"""Writing results without ever losing data or leaving a half-written or temporary file.

:func:`write_atomic` writes through a symbolic link to the file it names, and
keeps that file's mode and owner: the new text goes to a temporary file beside
it, which then replaces it in one rename. Where a rename would lose something,
the file is rewritten in place instead (same inode): when it has other hard
links (they must see the new text too), or when its owner or group cannot be
given to the temporary file (another user's file in a folder we may write).
The temporary file is removed on any error or interrupt.

A file is flushed to the disk (``fsync``) before the rename, so a crash leaves the
old text or the new, never an empty file. A copy of text that exists elsewhere
(an unchanged file that ``-o OUT`` copies) skips that wait: ``durable=False``.
It is still written beside and renamed, so a reader never sees half of it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile

__all__ = ["output_path", "write_atomic"]


def output_path(path: str, root: str, out: str) -> str:
    """Where ``-o OUT`` puts ``path`` found under the PATH ``root`` (a file PATH: ``OUT/<its name>``)."""
    same = os.path.abspath(path) == os.path.abspath(root)
    relative = os.path.basename(path) if same else os.path.relpath(path, root)
    return os.path.normpath(os.path.join(out, relative))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fill(handle_fd: int, data: bytes) -> None:
    with os.fdopen(handle_fd, "wb", closefd=False) as handle:
        handle.write(data)
        handle.flush()


def _rewrite_in_place(path: str, data: bytes, durable: bool) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        _fill(fd, data)
        os.ftruncate(fd, len(data))
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def _same_owner(fd: int, info: os.stat_result) -> bool:
    """Give the temporary file ``info``'s owner and group; False when that is not allowed."""
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) == (info.st_uid, info.st_gid):
        return True
    try:
        os.fchown(fd, info.st_uid, info.st_gid)
    except PermissionError:
        return False
    return True


def _replace(path: str, data: bytes, info: os.stat_result | None, durable: bool) -> bool:
    """Write through a temporary file and rename it over ``path``; False: must rewrite in place instead."""
    fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".npudsl-", suffix=".tmp")
    try:
        if info is not None and not _same_owner(fd, info):
            return False
        _fill(fd, data)
        if durable:
            os.fsync(fd)
        os.fchmod(fd, stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask())
        os.close(fd)
        fd = -1
        os.replace(temp, path)
        temp = ""
        return True
    finally:
        if fd >= 0:
            os.close(fd)
        if temp:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)


def write_atomic(path: str, text: str, *, durable: bool = True) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path``; raises ``OSError`` when it cannot.

    ``durable=False``: do not wait for the disk (for a copy of text that exists elsewhere).
    """
    target = os.path.realpath(path)  # through symbolic links
    if not os.path.isdir(os.path.dirname(target)):  # a stat, cheaper than a mkdir that fails per file
        os.makedirs(os.path.dirname(target), exist_ok=True)
    data = text.encode("utf-8")
    try:
        info: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None and info.st_nlink > 1:
        _rewrite_in_place(target, data, durable)
    elif not _replace(target, data, info, durable):
        _rewrite_in_place(target, data, durable)
