"""Names every part of the Ray fleet agrees on, and the one place that imports Ray.

:func:`import_ray` is how the other modules get the ``ray`` module: without the ``ray`` extra it
raises an error that names the extra, never a bare ``ModuleNotFoundError``.
"""

from __future__ import annotations

from types import ModuleType

from judgebox.sandbox.errors import SandboxRequestError

#: The Ray namespace of the pool and its executors.
NAMESPACE = "judgebox"
#: The name of the pool's registry actor in :data:`NAMESPACE`.
POOL_NAME = "judgebox-pool"
#: First part of every executor actor's name (``jbx-<node id prefix>-<n>``); a session id starts
#: with its executor's name, so a session's calls find its actor from the id alone.
EXECUTOR_PREFIX = "jbx"


def import_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        SandboxRequestError: Ray is not installed; the message names the ``ray`` extra.
    """
    try:
        import ray
    except ImportError as exc:
        raise SandboxRequestError(
            f"ray:// needs Ray, which is not installed here ({exc}): pip install \"judgebox[ray]\"", 422) from None
    return ray


def executor_name(node_id: str, index: int) -> str:
    """The actor name of executor ``index`` pinned to ``node_id`` (a hex node id)."""
    return f"{EXECUTOR_PREFIX}-{node_id[:16]}-{index}"


def executor_of_session(session_id: str) -> str:
    """The executor actor name a session id starts with (``<executor>-<boot>-<token>``)."""
    return session_id.rsplit("-", 2)[0]
