"""Kernels: ``/run_jupyter`` (:mod:`.jupyter`, one kernel per request) and sessions (:mod:`.manager`,
one long-lived kernel per session, the state behind ``code_interpreter``), both started by
:mod:`.kernel`; :mod:`.handle` is the caller's :class:`Session` handle, the same embedded and over
HTTP.
"""

from .handle import Session
from .manager import KernelSession, SessionManager, SessionStartError

__all__ = ["KernelSession", "Session", "SessionManager", "SessionStartError"]
