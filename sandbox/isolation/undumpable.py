"""Start a program *non-dumpable*: processes of the same uid can then neither read its memory, nor open
its file descriptors, environment or maps under ``/proc/<pid>`` (the run's seccomp filter already
denies ``ptrace`` and ``process_vm_readv``).

A split harness's tests' program (the request's ``tests_program``) starts the solution's program as
its child, under the same uid. A compiled tests' program is sealed execute-only, and Linux makes a
process that runs a file it cannot read non-dumpable. An interpreter (the JVM, Node.js, Python) must
read the files it runs, so its process would stay dumpable, and the solution could read the nonce and
write the verdict's line through ``/proc/<tests' pid>/fd/1``. :func:`loader_argv` closes that: the
interpreter is started through an execute-only copy of its ELF dynamic loader (``ld.so`` run as a
program, loading the interpreter itself), so the process that execs is one that cannot read its own
executable, and the kernel marks it non-dumpable before its first instruction (``would_dump`` in
``fs/exec.c``).
"""

from __future__ import annotations

import os
import shutil
import struct
import zipfile
from typing import Optional, Sequence

#: The execute-only copy of the dynamic loader, in the tests' folder.
LOADER_NAME = ".judgebox-ld.so"

_PT_INTERP = 3


class LoaderUnavailable(RuntimeError):
    """The program cannot be started through its dynamic loader (not a dynamically linked ELF file)."""


def class_archive(folder: str) -> int:
    """Move the ``.class`` files under ``folder`` into a jar in memory (a ``memfd``, unnamed) and
    return its descriptor; the files are removed. The tests' JVM is given the descriptor and
    ``/proc/self/fd/<n>`` as its class path: only its own process can open that path (the solution's,
    its child, neither inherits the descriptor, as Java's process start closes every descriptor past
    2, nor may open the non-dumpable JVM's ``/proc`` entries), so the tests' compiled expected values
    are nowhere the solution can read them. Format: a zip archive with the classes at their paths
    under ``folder`` (a jar without a manifest)."""
    fd = os.memfd_create("judgebox-tests-classes", os.MFD_CLOEXEC)
    try:
        with os.fdopen(os.dup(fd), "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_STORED) as jar:
            for root, _, names in os.walk(folder):
                for name in names:
                    if name.endswith(".class"):
                        path = os.path.join(root, name)
                        jar.writestr(os.path.relpath(path, folder), _read_own(path))
                        os.unlink(path)
    except BaseException:
        os.close(fd)
        raise
    os.set_inheritable(fd, True)
    return fd


def program_memfd(path: str) -> int:
    """Move the compiled program at ``path`` into a memfd, execute-only and root's (mode 0111: the run's
    uid may run it, not read it, so its process is non-dumpable), and return its descriptor. The
    tests' command runs ``/proc/self/fd/<n>`` with the descriptor closed by that very exec
    (``run_process``'s ``exec_fds``): afterwards no file and no descriptor names the program, so
    the solution's process cannot run the tests' program itself, with its own answers, as an oracle
    of the expected values (red team, issue 38: an execute-only file in the folder could be run)."""
    fd = os.memfd_create("judgebox-tests-program", os.MFD_CLOEXEC)
    try:
        with os.fdopen(os.dup(fd), "wb") as dst:
            dst.write(_read_own(path))
        os.fchmod(fd, 0o111)
        os.unlink(path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_own(path: str) -> bytes:
    """The bytes of ``path``, a file the run's compile step wrote; a link is not followed (the server
    is root, and the folder was the run's uid's: ``OSError`` ``ELOOP`` for a link)."""
    with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as f:
        return f.read()


def elf_interpreter(path: str) -> Optional[str]:
    """The ``PT_INTERP`` path of the 64-bit little-endian ELF file ``path`` (its dynamic loader), or
    ``None`` (not such a file, or statically linked). Format: the System V ABI's ELF header and
    program header table (``e_phoff`` at byte 32, ``e_phentsize``/``e_phnum`` at 54/56)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return None
            phoff, = struct.unpack_from("<Q", head, 32)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
            for i in range(phnum):
                kind, _, offset, _, _, size = struct.unpack_from("<IIQQQQ", table, i * phentsize)
                if kind == _PT_INTERP:
                    f.seek(offset)
                    return f.read(size).rstrip(b"\0").decode()
    except OSError:
        return None
    return None


def loader_argv(argv: Sequence[str], folder: str, path_env: Optional[str]) -> list[str]:
    """``argv`` (a system program's command, found on ``path_env``) as a command that runs the same
    program through an execute-only, root-owned copy of its dynamic loader placed in ``folder``
    (:data:`LOADER_NAME`, run relative to ``folder``, the command's working folder). The program
    is loaded from its real path (so ``$ORIGIN`` finds its libraries), with ``argv[0]`` kept as the
    program sees it (``--argv0``: a virtual environment's ``python`` stays one).

    Raises:
        LoaderUnavailable: the program is not found, or is not a dynamically linked ELF executable
            (a script, a static binary).
    """
    found = shutil.which(argv[0], path=path_env)
    if found is None:
        raise LoaderUnavailable(f"{argv[0]!r} is not on PATH")
    real = os.path.realpath(found)
    interp = elf_interpreter(real)
    if interp is None:
        raise LoaderUnavailable(f"{real} is not a dynamically linked ELF executable")
    copy = os.path.join(folder, LOADER_NAME)
    if not os.path.exists(copy):
        shutil.copyfile(interp, copy)
        os.chown(copy, 0, 0)
        os.chmod(copy, 0o711)
    return [f"./{LOADER_NAME}", "--argv0", found, real, *argv[1:]]


__all__ = ["LOADER_NAME", "LoaderUnavailable", "class_archive", "elf_interpreter", "loader_argv", "program_memfd"]
