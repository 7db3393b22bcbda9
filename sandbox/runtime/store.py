"""Where built runtimes live, and which one programs use.

A runtime of profile ``P`` is built into ``<cache root>/runtimes/P-<key>/`` (:func:`runtime_folder`),
``<key>`` a hash of the profile's lists and the interpreter it is built from, so a changed list or a
new Python builds anew beside the old one. The cache root is ``$JUDGEBOX_CACHE`` (default
``/var/cache/judgebox``: outside any checkout and any virtual environment). The folder holds
``python/`` (a virtual environment), ``node/node_modules/`` and ``runtime.json`` (its report,
written last: a folder without it is an unfinished build and is ignored). It is read-only for runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Optional

from .profiles import PROFILES, Profile

#: The name of the built report inside a runtime folder.
REPORT = "runtime.json"
#: What ``JUDGEBOX_RUNTIME`` (``SandboxSettings.runtime``) names to run programs in the server's own
#: interpreter, without a built runtime.
HOST = "host"
#: The command that builds a profile (error messages name it).
BUILD_COMMAND = "judgebox runtime build --profile {name}"


def cache_root() -> str:
    """``$JUDGEBOX_CACHE``, else ``/var/cache/judgebox``."""
    return os.environ.get("JUDGEBOX_CACHE") or "/var/cache/judgebox"


def base_python() -> str:
    """The interpreter runtimes are built from: the one running judgebox, outside any venv."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def runtime_folder(profile: Profile, root: Optional[str] = None, python: Optional[str] = None) -> str:
    """The folder a runtime of ``profile`` is (or will be) built in."""
    key = hashlib.sha256(repr((profile.python, profile.node, profile.debian, python or base_python(),
                               sys.version_info[:2])).encode()).hexdigest()[:12]
    return os.path.join(root or cache_root(), "runtimes", f"{profile.name}-{key}")


@dataclass(frozen=True)
class Runtime:
    """A built runtime: its ``folder`` and its ``report`` (``runtime.json``: the profile, the installed
    versions per package kind, the toolchain versions, what did not install and why)."""

    folder: str
    report: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.report.get("profile", os.path.basename(self.folder)))

    @property
    def python(self) -> Optional[str]:
        """The runtime's interpreter, or ``None`` when it has no Python packages."""
        path = os.path.join(self.folder, "python", "bin", "python")
        return path if os.path.exists(path) else None

    @property
    def node_path(self) -> Optional[str]:
        """The runtime's ``node_modules`` (programs' ``NODE_PATH``), or ``None``."""
        path = os.path.join(self.folder, "node", "node_modules")
        return path if os.path.isdir(path) else None

    def describe(self) -> dict[str, Any]:
        """What ``GET /languages`` and ``/health`` report: name, folder and the installed versions."""
        return {"name": self.name, "folder": self.folder,
                **{k: self.report.get(k, {}) for k in ("python", "node", "debian", "missing", "exclusions")}}


def load_runtime(folder: str) -> Optional[Runtime]:
    """The runtime built in ``folder``, or ``None`` if there is no finished build there."""
    try:
        with open(os.path.join(folder, REPORT), encoding="utf-8") as f:
            return Runtime(os.path.realpath(folder), json.load(f))
    except (OSError, ValueError):
        return None


def built(name: str, root: Optional[str] = None) -> Optional[Runtime]:
    """The build of profile ``name``: the one of its current lists, else its most recent finished
    build (e.g. one made with ``--languages``); ``None`` if there is none."""
    exact = load_runtime(runtime_folder(PROFILES[name], root))
    if exact is not None:
        return exact
    folder = os.path.join(root or cache_root(), "runtimes")
    try:
        names = [n for n in os.listdir(folder) if n.startswith(name + "-") and not n.endswith(".lock")]
    except OSError:
        return None
    found = [rt for n in names if (rt := load_runtime(os.path.join(folder, n))) is not None]
    return max(found, key=lambda rt: os.stat(os.path.join(rt.folder, REPORT)).st_mtime, default=None)


def find_runtime(choice: Optional[str]) -> Optional[Runtime]:
    """The runtime programs use for the setting ``choice`` (``SandboxSettings.runtime``).

    ``None``: the built ``default`` profile when there is one, else ``None`` (the host's interpreter);
    ``"host"``: ``None``; a profile name or a runtime folder: that runtime.

    Raises:
        ValueError: ``choice`` names a profile that is not built, or a folder without a finished
            build; the message gives the build command.
    """
    if choice == HOST:
        return None
    if choice is None:
        return built("default")
    if choice in PROFILES:
        found = built(choice)
        if found is None:
            raise ValueError(f"runtime: the {choice!r} profile is not built here; build it with "
                             f"`{BUILD_COMMAND.format(name=choice)}`, or use runtime 'host'")
        return found
    if os.sep in choice:
        found = load_runtime(choice)
        if found is None:
            raise ValueError(f"runtime: {choice!r} holds no finished runtime build (no {REPORT})")
        return found
    raise ValueError(f"runtime: {choice!r} is neither 'host', a profile ({', '.join(PROFILES)}) nor a "
                     "runtime folder")
