"""The few Linux calls the isolation modules need that Python 3.11's ``os`` lacks, through ctypes.

Each wrapper raises ``OSError(errno, "<call>(<args>): <reason>")`` on failure, so that an error
names the call that failed. Constants are the kernel's (``include/uapi/linux/sched.h``, ``mount.h``,
``prctl.h``); the syscall numbers of ``pivot_root`` are per architecture (``unistd.h``).
"""

from __future__ import annotations

import ctypes
import os
import platform
from typing import Optional

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWCGROUP = 0x02000000
CLONE_PARENT = 0x00008000
AF_VSOCK = 40

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
MNT_DETACH = 0x2

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2

_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217, "riscv64": 41}
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    """``unshare(2)``: move the caller into new namespaces (``CLONE_NEW*`` flags)."""
    _check(_libc.unshare(ctypes.c_int(flags)), f"unshare({flags:#x})")


def mount(source: Optional[str], target: str, fstype: Optional[str] = None, flags: int = 0,
          data: Optional[str] = None) -> None:
    """``mount(2)``."""
    def enc(s: Optional[str]) -> Optional[bytes]:
        return s.encode() if s is not None else None

    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount({source!r}, {target!r}, {fstype!r})")


def umount(target: str, flags: int = 0) -> None:
    """``umount2(2)``."""
    _check(_libc.umount2(target.encode(), ctypes.c_int(flags)), f"umount2({target!r})")


def pivot_root(new_root: str, put_old: str) -> None:
    """``pivot_root(2)`` (glibc has no wrapper; called by syscall number)."""
    number = _SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(38, f"pivot_root: unknown syscall number on {platform.machine()}")
    _check(_libc.syscall(ctypes.c_long(number), new_root.encode(), put_old.encode()),
           f"pivot_root({new_root!r})")


def prctl(option: int, arg: int = 0, arg3: int = 0) -> None:
    """``prctl(2)`` with integer arguments."""
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(arg3),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)), f"prctl({option})")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def load_seccomp_filter(bpf: bytes) -> None:
    """Install a classic-BPF seccomp program (``struct sock_filter[]`` bytes, 8 bytes each).

    Needs ``PR_SET_NO_NEW_PRIVS`` (or ``CAP_SYS_ADMIN``) first.
    """
    prog = _SockFprog(len(bpf) // 8, bpf)
    _check(_libc.prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(SECCOMP_MODE_FILTER),
                       ctypes.byref(prog), ctypes.c_ulong(0), ctypes.c_ulong(0)), "prctl(PR_SET_SECCOMP)")


def setns(fd: int, nstype: int) -> None:
    """``setns(2)``: join the namespace open at ``fd`` (for ``CLONE_NEWPID``: the calling thread's
    future children's namespace)."""
    _check(_libc.setns(ctypes.c_int(fd), ctypes.c_int(nstype)), f"setns({nstype:#x})")
