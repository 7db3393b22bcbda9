"""The HTTP face: ``judgebox serve`` (:mod:`.app`, FastAPI), admission control (:mod:`.admission`)
and Prometheus metrics (:mod:`.metrics`)."""

from .app import create_app

__all__ = ["create_app"]
