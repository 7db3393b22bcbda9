"""Which modules a Python run may be forked with already imported (a request's ``forkserver_preload``).

A run that names standard-library modules it imports first anyway (the reward harness's runner:
``ast``, ``json``, ``traceback``, ...) is forked from a fork-server that imported them before it
served (:mod:`judgebox.sandbox.speedups.forkserver`), as :func:`multiprocessing.set_forkserver_preload`
does for multiprocessing's fork-server. The program then starts with them in ``sys.modules``; nothing
else differs. Only standard-library modules qualify (no thread at import, nothing from the run's own
files), and a run whose files would shadow one (``json.py`` next to the program) is forked plain, so
its ``import json`` still finds its own file.
"""

from __future__ import annotations

import posixpath
import re
import sys
from collections.abc import Iterable

#: Most modules one request may name.
MAX_MODULES = 64
#: Standard-library modules whose import does something a run would see or that cannot load in a
#: fork-server (print, open a browser, need a display, start the REPL's machinery, run ``__main__``).
REFUSED = frozenset({"__main__", "__hello__", "__phello__", "this", "antigravity", "idlelib", "tkinter",
                     "turtle", "turtledemo", "ensurepip", "venv", "site", "sitecustomize", "usercustomize",
                     "pydoc", "pdb", "readline", "rlcompleter", "_tkinter",
                     # state made at import that a fresh process would make its own: multiprocessing's
                     # authkey, platform's uname cache (the fork-server's host name, not the run's)
                     "multiprocessing", "concurrent", "platform",
                     # deprecated or removed in later Pythons (their import warns; a client on another
                     # version must not send a name the server refuses)
                     "distutils", "imp", "asynchat", "asyncore", "smtpd", "aifc", "audioop", "cgi", "cgitb",
                     "chunk", "crypt", "imghdr", "mailcap", "msilib", "nis", "nntplib", "ossaudiodev", "pipes",
                     "sndhdr", "spwd", "sunau", "telnetlib", "uu", "xdrlib", "lib2to3", "winreg", "msvcrt",
                     "_winapi", "nt", "winsound"})
#: Longest module name accepted (characters).
MAX_NAME = 100
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def preloadable(name: str) -> bool:
    """Whether :func:`check_preload` accepts the module ``name``."""
    try:
        check_preload([name])
    except ValueError:
        return False
    return True


def check_preload(names: list[str]) -> list[str]:
    """``names`` if every one is a standard-library module (dotted name) a fork-server may import.

    Raises:
        ValueError: too many names, a malformed name, a module outside the standard library (of this
            Python: ``sys.stdlib_module_names``) or one of :data:`REFUSED`; the message names it.
    """
    if len(names) > MAX_MODULES:
        raise ValueError(f"at most {MAX_MODULES} modules, got {len(names)}")
    for name in names:
        if not isinstance(name, str) or len(name) > MAX_NAME or not _NAME.fullmatch(name):
            raise ValueError(f"{str(name)[:MAX_NAME]!r} is not a module name (dotted identifiers of at most "
                             f"{MAX_NAME} characters, e.g. 'json' or 'os.path')")
        if "__main__" in name.split("."):
            raise ValueError(f"{name!r} cannot be preloaded (a __main__ module runs a program)")
        top = name.split(".")[0]
        if top in REFUSED:
            raise ValueError(f"{name!r} cannot be preloaded (importing it has effects a run would see); "
                             "import it in the program")
        if top not in sys.stdlib_module_names:
            raise ValueError(f"{name!r} is not a standard-library module; only those can be preloaded "
                             "(import other packages in the program)")
    return names


def usable_preload(names: Iterable[str], paths: Iterable[str]) -> tuple[str, ...]:
    """The sorted, distinct ``names`` to fork a run with, or ``()`` when one of the run's files
    (``paths``: the program and its files, as sent) could shadow a standard-library module: a
    top-level ``<module>.py``, ``<module>.<ext>`` or ``<module>/`` of the working folder whose name is
    any standard-library module's (not only the requested ones': they import others, which the
    fork-server keeps too). Absolute paths are not on ``sys.path``."""
    wanted = tuple(sorted(set(names)))
    if not wanted:
        return ()
    for path in paths:
        if path.startswith("/"):
            continue
        first = posixpath.normpath(path).split("/")[0]
        if first.split(".")[0] in sys.stdlib_module_names:
            return ()
    return wanted
