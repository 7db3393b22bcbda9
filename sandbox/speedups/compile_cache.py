"""A content-addressed cache of compile outputs (C/C++ and Rust/Go binaries, Java classes).

A request whose source, extra files, compile command and toolchain are byte-for-byte those of an
earlier successful compile gets the earlier outputs copied into its working folder instead of
running the compiler again. Failed compiles are never cached.

Layout (one folder, owned by the server's user, mode 0700: run uids can neither read nor write it,
and it lies outside every run folder)::

    <root>/<key>/manifest.json   {"files": {relative path: {"sha256", "size", "mode"}}, "stdout", "stderr"}
    <root>/<key>/files/<relative path>

* key: SHA-256 over a format version, the language, the compile argv, the toolchain identity
  (version text, real path, size and mtime of the compiler) and every file written into the working
  folder before the compile (name and content).
* safety under concurrency: an entry is written into a private temporary folder and renamed into
  place (``rename(2)`` is atomic; when two servers race, the loser's copy is dropped); within one
  process, identical compiles in flight are single-flighted, so concurrent identical requests
  compile once and leave one entry.
* integrity: every file's SHA-256 is checked when it is restored; an entry that fails the check, or
  whose manifest cannot be read, is deleted and the request compiles as on a miss.
* bound: entries are evicted least-recently-used (a hit touches the entry's mtime) once the total
  size passes ``max_bytes``, down to 90 % of it.

A compile is assumed to be a function of these inputs (as ccache assumes): a program that includes
``__TIME__`` gets the time of the first compile.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

from judgebox.sandbox.runfs import FOLDER, READ, folder_of, walk

#: Bumped when the key or the layout changes, so an old entry never matches.
FORMAT = "judgebox-compile-cache-1"
#: An output set larger than this is not cached (bytes).
MAX_ENTRY_BYTES = 64 << 20


@dataclass(frozen=True)
class CachedCompile:
    """A cache hit: the outputs ``{relative path: (bytes, mode)}``, the compiler's original
    ``stdout``/``stderr`` (its warnings) and the seconds the lookup took."""

    files: dict[str, tuple[bytes, int]]
    stdout: str
    stderr: str
    seconds: float


def compile_key(language: str, argv: Sequence[str], toolchain: str, files: dict[str, bytes]) -> str:
    """The cache key (64 hex digits) of one compile.

    Args:
        language: recipe name.
        argv: the compile command as the recipe writes it (without server-side speed-ups such as a
            precompiled-header include path, which do not change the output's behaviour).
        toolchain: identity of the compiler (see :meth:`CompileCache.toolchain_id`).
        files: every file written into the working folder before the compile, ``{path: bytes}``.
    """
    h = hashlib.sha256()
    for part in (FORMAT, language, toolchain, *argv):
        h.update(part.encode() + b"\0")
    h.update(b"\1")
    for name in sorted(files):
        data = files[name]
        h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0")
        h.update(data)
    return h.hexdigest()


def toolchain_id(program: str, version: Optional[str]) -> str:
    """Identity of a compiler for the key: its version text plus real path, size and mtime (an
    upgrade in place changes at least one), e.g. ``"g++ (Debian 12.2.0-14) 12.2.0|/usr/bin/x86_64-linux-gnu-g++-12|..."``."""
    found = shutil.which(program) or program
    real = os.path.realpath(found)
    try:
        st = os.stat(real)
        return f"{version}|{real}|{st.st_size}|{st.st_mtime_ns}"
    except OSError:
        return f"{version}|{real}"


class CompileCache:
    """The cache folder of one server (shared by all its requests; thread-safe).

    Args:
        root: cache folder; made with mode 0700 (an existing one is re-moded and must belong to
            this user, else ``PermissionError``).
        max_bytes: total size bound in bytes (>= 1).

    Attributes:
        hits, misses, corrupt: counters since start (``corrupt`` entries are also misses).
    """

    def __init__(self, root: str, max_bytes: int) -> None:
        os.makedirs(root, mode=0o700, exist_ok=True)
        st = os.lstat(root)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            raise PermissionError(f"compile cache {root} must be a folder owned by uid {os.geteuid()}")
        os.chmod(root, 0o700)
        self.root = root
        self.max_bytes = max_bytes
        self.hits = self.misses = self.corrupt = 0
        self._lock = threading.Lock()
        self._flights: dict[str, list] = {}  # key -> [lock, users]
        self._size: Optional[int] = None  # bytes, scanned on first store

    # --------------------------------------------------------------------------------- flights
    @contextlib.contextmanager
    def flight(self, key: str) -> Iterator[None]:
        """Hold ``key`` exclusively within this process: a second identical compile waits here for
        the first to finish, then finds its entry."""
        with self._lock:
            entry = self._flights.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._lock:
                entry[1] -= 1
                if not entry[1]:
                    del self._flights[key]

    # --------------------------------------------------------------------------------- lookup
    def lookup(self, key: str) -> Optional[CachedCompile]:
        """The entry ``key`` with its files read and checked, or ``None`` on a miss.

        A corrupted entry (unreadable manifest, missing file, wrong size or SHA-256) is deleted,
        counted in :attr:`corrupt` and answered as a miss.
        """
        start = time.monotonic()
        entry = os.path.join(self.root, key)
        try:
            with open(os.path.join(entry, "manifest.json"), "rb") as f:
                manifest = json.load(f)
        except FileNotFoundError:
            self._count("misses")
            return None
        except (OSError, ValueError):
            return self._drop_corrupt(entry)
        files: dict[str, tuple[bytes, int]] = {}
        try:
            for rel, meta in manifest["files"].items():
                with open(os.path.join(entry, "files", rel), "rb") as f:
                    data = f.read(MAX_ENTRY_BYTES + 1)
                if len(data) != meta["size"] or hashlib.sha256(data).hexdigest() != meta["sha256"]:
                    return self._drop_corrupt(entry)
                files[rel] = (data, int(meta["mode"]) & 0o755)
            stdout, stderr = str(manifest["stdout"]), str(manifest["stderr"])
        except (OSError, KeyError, TypeError, ValueError, AttributeError):
            return self._drop_corrupt(entry)
        with contextlib.suppress(OSError):
            os.utime(entry)  # most recently used
        self._count("hits")
        return CachedCompile(files, stdout, stderr, time.monotonic() - start)

    def _drop_corrupt(self, entry: str) -> None:
        """Count and delete a corrupted entry; a miss."""
        self._count("corrupt")
        self._count("misses")
        self._remove(entry)
        return None

    def _count(self, name: str) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)

    # --------------------------------------------------------------------------------- store
    def store(self, key: str, workdir: str, patterns: Sequence[str], stdout: str, stderr: str) -> bool:
        """Save the outputs of a successful compile in ``workdir`` under ``key``.

        Args:
            key: from :func:`compile_key`.
            workdir: the run folder, after the compile (no process of the run is left).
            patterns: output names relative to ``workdir``; ``"**/*.ext"`` takes every regular
                file with that suffix at any depth (Java classes).
            stdout, stderr: the compiler's output, returned with every hit.

        Returns:
            ``True`` when an entry exists for ``key`` afterwards; ``False`` when the outputs are
            missing, not regular files, or larger than :data:`MAX_ENTRY_BYTES` together.
        """
        outputs = collect_outputs(workdir, patterns)
        if not outputs or sum(len(d) for d, _ in outputs.values()) > MAX_ENTRY_BYTES:
            return False
        tmp = os.path.join(self.root, f"tmp-{uuid.uuid4().hex}")
        manifest = {"stdout": stdout, "stderr": stderr, "files": {}}
        try:
            for rel, (data, mode) in outputs.items():
                path = os.path.join(tmp, "files", rel)
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
                manifest["files"][rel] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
                                          "mode": mode}
            with open(os.path.join(tmp, "manifest.json"), "w") as f:
                json.dump(manifest, f)
            os.rename(tmp, os.path.join(self.root, key))
        except OSError:  # another process stored the same key first, or the disk is full
            shutil.rmtree(tmp, ignore_errors=True)
            return os.path.isdir(os.path.join(self.root, key))
        self._grew(entry_size(os.path.join(self.root, key)))
        return True

    # --------------------------------------------------------------------------------- bound
    def size(self) -> int:
        """Bytes held by all entries (scanned once, then tracked)."""
        with self._lock:
            if self._size is None:
                self._size = sum(entry_size(e.path) for e in self._entries())
            return self._size

    def _grew(self, nbytes: int) -> None:
        self.size()
        with self._lock:
            self._size = (self._size or 0) + nbytes
            if self._size <= self.max_bytes:
                return
            entries = sorted(_aged(self._entries()))
            total = sum(entry_size(p) for _, p in entries)
            for _, path in entries:
                if total <= self.max_bytes * 0.9:
                    break
                total -= entry_size(path)
                self._remove(path)
            self._size = total

    def _entries(self) -> list[os.DirEntry]:
        return [e for e in os.scandir(self.root) if len(e.name) == 64 and e.is_dir(follow_symlinks=False)]

    def _remove(self, entry: str) -> None:
        """Delete an entry: renamed away first, so a reader never sees half of one."""
        trash = os.path.join(self.root, f"trash-{uuid.uuid4().hex}")
        try:
            os.rename(entry, trash)
        except OSError:
            return
        shutil.rmtree(trash, ignore_errors=True)


def _aged(entries: list[os.DirEntry]) -> list[tuple[int, str]]:
    """``(mtime in ns, path)`` of each entry still there: another process sharing the cache may have
    evicted one since the folder was listed (a bound pass must not fail a compile)."""
    aged = []
    for e in entries:
        with contextlib.suppress(FileNotFoundError):
            aged.append((e.stat(follow_symlinks=False).st_mtime_ns, e.path))
    return aged


def entry_size(path: str) -> int:
    """Bytes of the regular files under ``path`` (0 if it vanished)."""
    total = 0
    for folder, _, names in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def collect_outputs(workdir: str, patterns: Sequence[str]) -> dict[str, tuple[bytes, int]]:
    """``{relative path: (bytes, mode)}`` of the regular files in ``workdir`` matching ``patterns``.

    ``"**/*.ext"`` takes every regular file with that suffix at any depth, walked from folder
    descriptors without recursion (:func:`judgebox.sandbox.runfs.walk`). Links are never followed
    (``O_NOFOLLOW``): a run cannot make the server cache a file from outside its folder;
    ``O_NONBLOCK``: a FIFO in an output's place cannot block the server; sizes are summed before
    anything is read (a sparse file costs no disk, its read would). Returns ``{}`` when a fixed name
    is missing or not a regular file, or the outputs pass :data:`MAX_ENTRY_BYTES` together.
    """
    found: list[tuple[str, bytes, int]] = []
    room = [MAX_ENTRY_BYTES]

    def take(folder: int, name: str, rel: str) -> bool:
        """Read ``name`` of ``folder`` into ``found``; ``False`` if it is not a regular file or too big."""
        try:
            fd = os.open(name, READ, dir_fd=folder)
        except OSError:
            return False
        try:
            st = os.fstat(fd)
            room[0] -= st.st_size
            if not stat.S_ISREG(st.st_mode) or room[0] < 0:
                return False
            found.append((rel, os.read(fd, st.st_size + 1) if st.st_size else b"", stat.S_IMODE(st.st_mode)))
            return True
        finally:
            os.close(fd)

    top = os.open(workdir, FOLDER)
    try:
        for pattern in patterns:
            if not pattern.startswith("**/*"):
                fd, name = folder_of(top, pattern) if "/" in pattern else (os.dup(top), pattern)
                try:
                    if not take(fd, name, pattern):
                        return {}
                finally:
                    os.close(fd)
                continue
            suffix, before = pattern[4:], len(found)

            def enter(folder: int, path: Optional[tuple]) -> list[tuple[str, tuple]]:
                """Take the matching files; the subfolders to visit, each with its path as a linked list."""
                below = []
                for entry in os.scandir(folder):
                    if entry.is_dir(follow_symlinks=False):
                        below.append((entry.name, (path, entry.name)))
                    elif entry.name.endswith(suffix) and entry.is_file(follow_symlinks=False):
                        rel = [entry.name]
                        node = path
                        while node is not None:
                            node, part = node
                            rel.append(part)
                        if not take(folder, entry.name, "/".join(reversed(rel))) and room[0] < 0:
                            raise _TooBig
                return below

            try:
                walk(top, enter, lambda folder, path: None, None)
            except _TooBig:
                return {}
            if len(found) == before:
                return {}
    except (OSError, ValueError):
        return {}
    finally:
        os.close(top)
    return {rel: (data, mode) for rel, data, mode in found}


class _TooBig(Exception):
    """The outputs pass :data:`MAX_ENTRY_BYTES` together."""
