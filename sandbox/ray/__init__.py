"""judgebox's sandbox fleet on Ray: executor actors, one per node, found through a named pool.

- :mod:`.names`: the namespace and actor names, and the one place Ray is imported (an error naming the
  ``ray`` extra when it is missing);
- :mod:`.cluster`: ``ray://`` URLs and the connection to the cluster they name;
- :mod:`.executor`: the executor actor (a ``LocalSandbox`` with the server's overload semantics);
- :mod:`.pool`: the registry actor that keeps one executor per node, and :class:`Pool`, the driver's
  handle on it (``judgebox ray up/status/down``).

Clients reach the fleet with ``SandboxClient("ray://")`` (:mod:`judgebox.sandbox.client.raysandbox`).
Importing this package does not import Ray; using it without Ray raises an error naming the extra.
"""

from .pool import Pool, PoolConfig

__all__ = ["Pool", "PoolConfig"]
