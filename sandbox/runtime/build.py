"""``judgebox runtime build``: install a profile's packages into its runtime folder.

Steps, each announced as ``[i/n] ...`` and showing pip's and npm's own progress: a virtual
environment from :func:`~judgebox.sandbox.runtime.store.base_python` with the profile's Python
requirements; the npm packages into ``node/node_modules``; the versions of the Debian packages
(installed by ``scripts/install.sh``; a missing one is reported, never installed here). The report
(``runtime.json``) is written last; then every file is made read-only. A build that stopped half-way
(no report) is removed and started again; two builds of one profile at once wait for each other.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import platform
import shutil
import stat
import subprocess
import time
from dataclasses import replace
from typing import Callable, Iterator, Optional, Sequence

from .profiles import KINDS, Profile
from .store import REPORT, Runtime, base_python, load_runtime, runtime_folder


class BuildError(RuntimeError):
    """A step of the build failed; the message names the step, the command and its exit status."""


def select(profile: Profile, kinds: Optional[Sequence[str]]) -> Profile:
    """``profile`` with only the package kinds ``kinds`` (``None``: all).

    Raises:
        ValueError: an unknown kind, naming the known ones.
    """
    if kinds is None:
        return profile
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise ValueError(f"--languages: {', '.join(unknown)} unknown; choose among {', '.join(KINDS)}")
    return replace(profile, **{k: () for k in KINDS if k not in kinds})


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _run(step: str, argv: Sequence[str], **kw) -> None:
    try:
        proc = subprocess.run(list(argv), **kw)
    except OSError as exc:
        raise BuildError(f"{step}: {argv[0]} could not start: {exc}") from None
    if proc.returncode != 0:
        raise BuildError(f"{step}: `{' '.join(argv)}` exited with status {proc.returncode} (its output is above)")


def _python(profile: Profile, folder: str) -> dict[str, str]:
    venv = os.path.join(folder, "python")
    _run("python", [base_python(), "-m", "venv", venv])
    python = os.path.join(venv, "bin", "python")
    _run("python", [python, "-m", "pip", "install", "--no-input", "--disable-pip-version-check", *profile.python])
    out = subprocess.run([python, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
                         capture_output=True, text=True, check=True).stdout
    return {p["name"]: p["version"] for p in json.loads(out)}


def _node(profile: Profile, folder: str) -> dict[str, str]:
    prefix = os.path.join(folder, "node")
    os.makedirs(prefix)
    _run("node", ["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", *profile.node])
    found = {}
    for spec in profile.node:
        name = spec.rsplit("@", 1)[0] if spec.rfind("@") > 0 else spec
        try:
            with open(os.path.join(prefix, "node_modules", name, "package.json"), encoding="utf-8") as f:
                found[name] = json.load(f)["version"]
        except (OSError, ValueError, KeyError):
            pass
    return found


def debian_versions(packages: Sequence[str]) -> tuple[dict[str, str], dict[str, str]]:
    """``(installed {package: version}, missing {package: why})`` of Debian ``packages`` (``dpkg-query``)."""
    found, missing = {}, {}
    for pkg in packages:
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Status}|${Version}", pkg], capture_output=True, text=True)
        status, _, version = out.stdout.partition("|")
        if out.returncode == 0 and status.endswith(" installed"):
            found[pkg] = version
        else:
            missing[pkg] = f"not installed: apt-get install {pkg} (scripts/install.sh does)"
    return found, missing


def _read_only(folder: str) -> None:
    """Clear every write bit under ``folder`` (links are left alone), deepest first."""
    for top, dirs, files in os.walk(folder, topdown=False):
        for name in files + dirs:
            path = os.path.join(top, name)
            st = os.lstat(path)
            if not stat.S_ISLNK(st.st_mode):
                os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o222)
    os.chmod(folder, stat.S_IMODE(os.stat(folder).st_mode) & ~0o222)


def _remove(folder: str) -> None:
    """Remove a (read-only) unfinished build."""
    for top, dirs, _ in os.walk(folder):
        for d in dirs:
            path = os.path.join(top, d)
            if not os.path.islink(path):
                os.chmod(path, 0o755)
    os.chmod(folder, 0o755)
    shutil.rmtree(folder)


def build_runtime(profile: Profile, root: Optional[str] = None,
                  echo: Callable[[str], None] = functools.partial(print, flush=True)) -> Runtime:
    """Build ``profile`` (see the module docstring) and return it; an existing finished build is
    returned as it is.

    Raises:
        BuildError: a step failed (pip or npm could not install a package, no network, ...).
    """
    folder = runtime_folder(profile, root)
    os.makedirs(os.path.dirname(folder), mode=0o755, exist_ok=True)
    with _locked(folder + ".lock"):
        done = load_runtime(folder)
        if done is not None:
            echo(f"runtime {profile.name!r} is already built in {folder}")
            return done
        if os.path.lexists(folder):
            echo(f"removing an unfinished build in {folder}")
            _remove(folder)
        os.makedirs(folder, mode=0o755)
        report: dict = {"profile": profile.name, "built_from": base_python(),
                        "python_version": platform.python_version(), "python": {}, "node": {}, "debian": {},
                        "missing": {}, "exclusions": dict(profile.exclusions)}
        kinds = profile.languages()
        start = time.monotonic()
        for i, kind in enumerate(kinds, 1):
            echo(f"[{i}/{len(kinds)}] {kind}: {len(getattr(profile, kind))} packages")
            if kind == "python":
                report["python"] = _python(profile, folder)
            elif kind == "node":
                report["node"] = _node(profile, folder)
            else:
                report["debian"], missing = debian_versions(profile.debian)
                report["missing"].update(missing)
        with open(os.path.join(folder, REPORT), "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, sort_keys=True)
        _read_only(folder)
        echo(f"runtime {profile.name!r} built in {folder} ({time.monotonic() - start:.0f} s)"
             + "".join(f"\n  missing {k}: {why}" for k, why in report["missing"].items()))
        built = load_runtime(folder)
        assert built is not None
        return built
