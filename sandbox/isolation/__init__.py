"""The isolation of one run, one module per mechanism, composed by :mod:`.unit`:

- :mod:`.view`: the filesystem view (a read-only skeleton, binds, masks) built in the child;
- :mod:`.pidns`: the run's PID namespace and its init;
- :mod:`.disk`: the run's disk quota (one tmpfs);
- :mod:`.seccomp`: no-new-privs and the syscall filter;
- :mod:`.cgroups`: memory, pids, CPU accounting and the freezer;
- :mod:`.users`: the per-run uids;
- :mod:`.kill`: killing a run's processes until none is left;
- :mod:`.childsetup`: the child-side sequence every run's process goes through (also loaded by
  path into the fork-server, so it imports only the standard library and :mod:`.linux`);
- :mod:`.linux`: the few Linux calls Python's ``os`` lacks.

Layer rule: nothing here imports the engine, the speed-ups, sessions or the faces.
"""

from .unit import Isolation, IsolationUnavailable, RunIsolation

__all__ = ["Isolation", "IsolationUnavailable", "RunIsolation"]
