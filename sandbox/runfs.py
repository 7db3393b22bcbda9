"""The server's operations on a run's working folder: never through a link the run planted.

The run owns its working folder, so anything in it may be a link, a FIFO or a folder where a file
is expected. Every operation here starts from an open folder descriptor and moves down one name at
a time with ``O_NOFOLLOW`` (``openat``/``dir_fd``), checks each entry's type with ``lstat``/``fstat``,
and opens files with ``O_NONBLOCK`` (a FIFO can never block the server). Folders are walked one open
descriptor at a time, without recursion. Used by the executor (the request's files, a case's files,
``fetch_files``), the case reset and the compile cache.
"""

from __future__ import annotations

import base64
import errno
import os
import posixpath
import stat
from typing import Any, Callable, Iterable, Optional

FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def folder_of(root: int, rel: str, create: bool = False, uid: Optional[int] = None) -> tuple[int, str]:
    """Open the folder holding ``rel`` below the open folder ``root``, one name at a time with
    ``O_NOFOLLOW`` (so any path up to 4095 bytes, :data:`judgebox.sandbox.models.PATH_MAX`, is reached
    whatever the length of the working folder's own path, and no link is ever followed).

    Args:
        root: an open descriptor of the working folder.
        rel: a validated relative path (normalised here: ``a//b``, ``./a`` and ``a/../b`` are fine).
        create: make missing folders (mode 0755, owned by ``uid`` when given); a name on the way
            that is not a folder (a link, a file, a FIFO the run left) is removed and made a folder.

    Returns:
        ``(descriptor of the folder, the file's own name)``; the caller closes the descriptor.

    Raises:
        ValueError: (``create`` false) a folder of the path is a link or a file.
        FileNotFoundError: a folder is missing and ``create`` is false.
    """
    *folders, name = posixpath.normpath(rel).split("/")
    fd = os.dup(root)
    try:
        for part in folders:
            made = False
            if create:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                    made = True
                except FileExistsError:
                    if not stat.S_ISDIR(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                        os.unlink(part, dir_fd=fd)
                        os.mkdir(part, 0o755, dir_fd=fd)
                        made = True
            try:
                sub = os.open(part, FOLDER, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise ValueError(f"{rel!r} goes through {part!r}, which is not a folder (a link there "
                                     "could lead outside the working directory)") from None
                raise
            os.close(fd)
            fd = sub
            if made and uid is not None:
                os.fchown(fd, uid, uid)
    except BaseException:
        os.close(fd)
        raise
    return fd, name


def write_files(workdir: str, files: dict[str, bytes], uid: Optional[int] = None) -> None:
    """Write ``{relative path: bytes}`` under ``workdir`` as new regular files, creating folders.

    The server's files win over what the run left: a link, FIFO, socket or folder at a file's name,
    or anything but a folder on its way, is removed first (:func:`folder_of`, :func:`remove_entry`);
    nothing is followed or opened but the new file.

    Args:
        workdir: the run's working directory.
        files: validated relative paths and their contents.
        uid: owner to give the files and the folders made for them (``None``: leave as is).

    Raises:
        OSError: the file could not be written (e.g. the disk quota is full).
    """
    root = os.open(workdir, FOLDER)
    try:
        for rel, data in files.items():
            fd, name = folder_of(root, rel, create=True, uid=uid)
            try:
                try:
                    out = os.open(name, _WRITE, 0o644, dir_fd=fd)
                except FileExistsError:
                    remove_entry(fd, name)
                    out = os.open(name, _WRITE, 0o644, dir_fd=fd)
            finally:
                os.close(fd)
            with os.fdopen(out, "wb") as f:
                f.write(data)
                if uid is not None:
                    os.fchown(f.fileno(), uid, uid)
    finally:
        os.close(root)


def remove_output(workdir: str, rel: str) -> None:
    """Remove the file (or link) ``rel`` under ``workdir`` if present; a folder is left alone, and
    nothing is looked for through a link (such an output could not be fetched either)."""
    root = os.open(workdir, FOLDER)
    try:
        fd, name = folder_of(root, rel)
    except (FileNotFoundError, ValueError):
        return
    finally:
        os.close(root)
    try:
        if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
            os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)


class FetchBudget:
    """Bytes of ``fetch_files`` still allowed for one request, all its cases and its own together,
    counted as they are sent: base64 text (4 bytes per 3 of a file)."""

    def __init__(self, limit_bytes: int) -> None:
        self.left = limit_bytes


def fetch(workdir: str, paths: list[str], budget: "FetchBudget | int") -> dict[str, str]:
    """Read regular files under ``workdir`` as base64; missing files, links (a link is never
    followed, at any level of the path) and anything else that is not a regular file (a folder, a
    FIFO, a socket) are skipped.

    Args:
        workdir: the run's working directory.
        paths: validated relative paths (``fetch_files``).
        budget: bytes of base64 text returned in all (``fetch_limit_bytes``; a :class:`FetchBudget`
            shared by the cases of a request, or a number for this call alone): a file whose base64
            would pass it is left out, so a program cannot make the server (or a reward worker)
            hold gigabytes.

    Returns:
        ``{path: base64 content}`` for each path that is a regular file inside ``workdir``.
    """
    budget = budget if isinstance(budget, FetchBudget) else FetchBudget(budget)
    out: dict[str, str] = {}
    root = os.open(workdir, FOLDER)
    try:
        for rel in paths:
            try:
                fd, name = folder_of(root, rel)
                try:
                    f = os.open(name, READ, dir_fd=fd)
                finally:
                    os.close(fd)
            except (OSError, ValueError):
                continue
            room = budget.left // 4 * 3  # the largest file whose base64 fits
            try:
                st = os.fstat(f)
                if not stat.S_ISREG(st.st_mode) or st.st_size > room:
                    continue
                data = os.read(f, room + 1) if room else b""
                while len(data) <= room and (chunk := os.read(f, room + 1 - len(data))):
                    data += chunk
            finally:
                os.close(f)
            if len(data) > room:
                continue
            out[rel] = base64.b64encode(data).decode()
            budget.left -= len(out[rel])
    finally:
        os.close(root)
    return out


def remove_tree(path: str) -> None:
    """Remove ``path`` and all it holds, through descriptors and without recursion (any depth); a
    missing path or an entry that cannot be removed is left (errors are ignored)."""
    try:
        top = os.open(os.path.dirname(path) or ".", FOLDER)
    except OSError:
        return
    try:
        remove_entry(top, os.path.basename(path))
    except OSError:
        pass
    finally:
        os.close(top)


def remove_entry(fd: int, name: str) -> None:
    """Remove ``name`` from the open folder ``fd``: a folder with all it holds, else the entry
    itself (a link is removed, never followed)."""
    if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
        os.unlink(name, dir_fd=fd)
        return

    def unlink_files(d: int, _: Any) -> list[tuple[str, None]]:
        folders = []
        make_writable(d)
        for n in os.listdir(d):
            if stat.S_ISDIR(os.stat(n, dir_fd=d, follow_symlinks=False).st_mode):
                folders.append((n, None))
            else:
                os.unlink(n, dir_fd=d)
        return folders

    def remove_folders(d: int, _: Any) -> None:
        for n in os.listdir(d):  # emptied by now
            os.rmdir(n, dir_fd=d)

    sub = open_folder(fd, name)
    try:
        walk(sub, unlink_files, remove_folders)
    finally:
        os.close(sub)
    os.rmdir(name, dir_fd=fd)


def walk(fd: int, enter: Callable[[int, Any], Iterable[tuple[str, Any]]],
         leave: Callable[[int, Any], None], state: Any = None) -> None:
    """Depth-first over the open folder ``fd`` and the folders below it, one descriptor at a time.

    ``enter(folder_fd, state)`` handles a folder's own entries and returns ``(name, state)`` of each
    subfolder to visit (each must be a folder, not a link), ``leave(folder_fd, state)`` is called
    once they all were; ``state`` is the caller's own per-folder value (``state`` for ``fd``). The
    walk moves down by name (``O_NOFOLLOW``) and back up by ``..``, with no recursion and no copy of
    the path: time and memory are linear in the folders visited, at any depth. ``fd`` stays open.
    """
    stack = [(list(enter(fd, state))[::-1], state)]
    cur = os.dup(fd)
    try:
        while True:
            todo, here = stack[-1]
            if todo:
                name, below = todo.pop()
                nxt = open_folder(cur, name)
                os.close(cur)
                cur = nxt
                stack.append((list(enter(cur, below))[::-1], below))
                continue
            leave(cur, here)
            stack.pop()
            if not stack:
                return
            nxt = os.open("..", FOLDER, dir_fd=cur)
            os.close(cur)
            cur = nxt
    finally:
        os.close(cur)


def open_folder(fd: Optional[int], name: str) -> int:
    """Open folder ``name`` of the open folder ``fd`` (``None``: ``name`` is a path), never through a
    link. A server that is not root runs as the run's own user: a folder whose rights the run took
    away is given its owner's rights back (after ``lstat`` said it is a folder)."""
    try:
        return os.open(name, FOLDER, dir_fd=fd)
    except PermissionError:
        if os.geteuid() == 0 or not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
            raise
    os.chmod(name, 0o700, dir_fd=fd)
    return os.open(name, FOLDER, dir_fd=fd)


def make_writable(fd: int) -> None:
    """Let a server that is not root change the entries of the open folder ``fd`` (root always can);
    the folder's own mode is restored after."""
    mode = stat.S_IMODE(os.fstat(fd).st_mode)
    if os.geteuid() != 0 and mode & 0o700 != 0o700:
        os.fchmod(fd, mode | 0o700)
