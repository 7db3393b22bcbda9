"""Reach the Ray cluster a ``ray://`` URL names.

``ray://`` alone is the cluster this process is connected to, else ``RAY_ADDRESS``, else ``auto``
(the cluster ``ray start`` made on this machine). ``ray://HOST:PORT`` is the address ``ray start
--head`` prints (the GCS address given to ``ray.init(address=...)``). Ray Client addresses (the
``ray://`` of Ray's own client server, port 10001) are not supported: they add a gRPC hop per call.
"""

from __future__ import annotations

import os
import socket
from typing import Optional

from judgebox.sandbox.errors import SandboxRequestError, SandboxUnavailable

from .names import import_ray

__all__ = ["connect", "is_ray_url", "parse_ray_url"]


def is_ray_url(url: str) -> bool:
    """Whether ``url`` is a ``ray://`` URL."""
    return url.strip().lower().startswith("ray://")


def parse_ray_url(url: str) -> Optional[str]:
    """The cluster address in a ``ray://`` URL: ``None`` for ``ray://`` alone, else ``"HOST:PORT"``.

    Raises:
        SandboxRequestError: not ``ray://`` or ``ray://HOST:PORT`` (a path, a missing or bad port).
    """
    rest = url.strip()[len("ray://"):].rstrip("/")
    for suffix in ("/run_code", "/run_tests"):  # verl's sandbox_fusion_url names the endpoint
        rest = rest.removesuffix(suffix)
    if not rest:
        return None
    host, _, port = rest.rpartition(":")
    if "/" in rest or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise SandboxRequestError(f"{url!r}: a Ray sandbox URL is ray:// (the cluster this process is connected "
                                  "to, else RAY_ADDRESS, else auto) or ray://HOST:PORT (the address `ray start "
                                  "--head` prints)", 422)
    return rest


def _same_place(a: str, b: str) -> bool:
    """Whether two ``HOST:PORT`` addresses name the same GCS (loopback and this host's names agree)."""
    (ha, _, pa), (hb, _, pb) = a.rpartition(":"), b.rpartition(":")
    if pa != pb:
        return False

    def where(host: str) -> str:
        try:
            ip = socket.gethostbyname(host)
        except OSError:
            return host
        local = ip.startswith("127.") or ip in _local_ips()
        return "local" if local else ip

    return where(ha) == where(hb)


def _local_ips() -> set[str]:
    try:
        return set(socket.gethostbyname_ex(socket.gethostname())[2])
    except OSError:
        return set()


def connect(address: Optional[str] = None):
    """The ``ray`` module, connected to the cluster at ``address`` (``None``: the one this process is
    connected to, else ``RAY_ADDRESS``, else ``auto``).

    Raises:
        SandboxRequestError: Ray is not installed (names the ``ray`` extra); this process is connected
            to another cluster; ``RAY_ADDRESS`` is a Ray Client address (``ray://``).
        SandboxUnavailable: no Ray cluster answers there (says how to start one).
    """
    ray = import_ray()
    if ray.is_initialized():
        here = ray.get_runtime_context().gcs_address
        if address and not _same_place(address, here):
            raise SandboxRequestError(f"ray://{address}: this process is already connected to the Ray cluster at "
                                      f"{here}; use ray:// (that cluster) or run in a process of the other one", 422)
        return ray
    target = address or os.environ.get("RAY_ADDRESS") or "auto"
    if is_ray_url(target):
        raise SandboxRequestError(f"RAY_ADDRESS={target}: Ray Client addresses are not supported (a gRPC hop per "
                                  "call); give the cluster's GCS address HOST:PORT (what `ray start --head` prints)",
                                  422)
    try:
        ray.init(address=target, log_to_driver=False, logging_level="WARNING")
    except (ConnectionError, RuntimeError) as exc:
        raise SandboxUnavailable(f"no Ray cluster at {target} ({type(exc).__name__}: {exc}): start one with `ray "
                                 "start --head`, then the sandbox fleet with `judgebox ray up`") from None
    return ray
