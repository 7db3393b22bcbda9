"""The HTTP face: ``judgebox serve`` (:mod:`.app`, FastAPI), admission control (:mod:`.admission`)
and Prometheus metrics (:mod:`.metrics`).

``create_app`` is imported on first use: the Ray actor uses :mod:`.admission` alone, and importing it
through this package loaded FastAPI and the whole app (issue 41, faces as peers)."""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
