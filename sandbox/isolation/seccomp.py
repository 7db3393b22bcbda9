"""The syscall filter of every run: a seccomp program that answers ``EPERM`` to escape tools.

Built once per executor with libseccomp through the ``pyseccomp`` binding (ctypes, API-compatible
with libseccomp's own Python module) and exported as classic BPF; each run's child loads those
bytes with one ``prctl`` (:func:`judgebox.sandbox.isolation.childsetup.seal`) just before exec, after
``PR_SET_NO_NEW_PRIVS`` and the switch to the run uid. Every other call is allowed, so numpy, the
JVM, Go, Node and multiprocessing run unchanged; a denied call returns ``EPERM`` (never a kill), so
the program sees an ordinary error.

Denied (:data:`DENIED`): ``ptrace``, ``process_vm_readv/writev``, ``mount``, ``umount2``,
``pivot_root``, ``chroot``, ``kexec_load``, ``kexec_file_load``, ``bpf``, ``keyctl``, ``add_key``,
``request_key``, ``perf_event_open``, ``unshare``, ``setns``, ``init_module``, ``finit_module``,
``delete_module``, the new mount API (``fsopen`` …), ``userfaultfd``, ``io_uring_setup``,
``io_uring_enter`` and ``io_uring_register`` (its operations bypass this filter; Docker's default
profile denies it too), ``inotify_*`` and ``fanotify_*`` (the toolchains are bound read-only into
every run's view, so a watch on them saw which files a concurrent run's compiler opened, issue 46); ``clone`` with any ``CLONE_NEW*`` flag or with ``CLONE_PARENT`` (a child of
the run's parent, outside the run's process tree: as a zombie of the server it kept the run's PID
namespace from ending); ``socket(AF_VSOCK)`` (the host's virtual-machine sockets, outside every
network namespace); ``clone3`` answers ``ENOSYS`` (its flags live in memory a filter cannot read;
glibc then falls back to ``clone``), as Docker's default profile does.
"""

from __future__ import annotations

import errno
import tempfile
from typing import Optional

from . import linux

DENIED = ("ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root", "chroot",
          "kexec_load", "kexec_file_load", "bpf", "keyctl", "add_key", "request_key", "perf_event_open",
          "unshare", "setns", "init_module", "finit_module", "delete_module", "fsopen", "fsmount",
          "fsconfig", "move_mount", "open_tree", "fspick", "mount_setattr", "userfaultfd", "io_uring_setup",
          "io_uring_enter", "io_uring_register", "inotify_init", "inotify_init1", "inotify_add_watch",
          "fanotify_init", "fanotify_mark")
#: ``clone`` flags that are refused: new namespaces, and a parent outside the run's tree.
DENIED_CLONE_FLAGS = (linux.CLONE_NEWNS, linux.CLONE_NEWUTS, linux.CLONE_NEWIPC, linux.CLONE_NEWUSER,
                      linux.CLONE_NEWPID, linux.CLONE_NEWNET, linux.CLONE_NEWCGROUP, linux.CLONE_PARENT)
#: ``socket`` address families that are refused.
DENIED_FAMILIES = (linux.AF_VSOCK,)


def build_filter() -> bytes:
    """The filter as BPF bytes for this machine's architecture.

    Raises:
        ImportError: ``pyseccomp`` is not installed (``pip install pyseccomp``).
        OSError: libseccomp (``libseccomp.so.2``) is missing or refused the filter.
    """
    import pyseccomp as seccomp

    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    deny = seccomp.ERRNO(errno.EPERM)
    for name in DENIED:
        try:
            f.add_rule(deny, name)
        except (OSError, ValueError, RuntimeError):  # a call this kernel/arch does not have
            pass
    for bit in DENIED_CLONE_FLAGS:  # one rule per flag: any of them set is refused
        f.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, bit, bit))
    for family in DENIED_FAMILIES:
        f.add_rule(deny, "socket", seccomp.Arg(0, seccomp.EQ, family))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as out:
        f.export_bpf(out)
        out.seek(0)
        return out.read()


def try_build_filter() -> tuple[Optional[bytes], Optional[str]]:
    """``(filter, None)``, or ``(None, why)`` when it cannot be built here."""
    try:
        return build_filter(), None
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
