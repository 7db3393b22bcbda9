"""The client face: :class:`SandboxClient` (:mod:`.client`) over :mod:`.transport` (HTTP, retries,
sessions) and :mod:`.endpoints` (balancing, health), configured by :class:`ClientSettings`
(:mod:`.settings`)."""

from .client import SandboxClient
from .settings import ClientSettings

__all__ = ["ClientSettings", "SandboxClient"]
