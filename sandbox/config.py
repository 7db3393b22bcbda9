"""One typed configuration for the executor and the server (the single source of truth).

Every field can be set by argument (``SandboxSettings(max_concurrency=4)``), by environment variable
(``JUDGEBOX_MAX_CONCURRENCY=4``) or by the ``judgebox serve`` flags, which build this model.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from typing import Literal, Optional

from pydantic import Field, PrivateAttr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .runtime import Runtime, find_runtime


def default_python() -> str:
    """The interpreter that runs ``python`` programs: the one running judgebox (it has numpy)."""
    return sys.executable or shutil.which("python3") or "python3"


class SandboxSettings(BaseSettings):
    """Limits, isolation switches and capacity of one executor (embedded or behind the server).

    Units: seconds for times, MiB for memory, bytes for output and file sizes.
    """

    model_config = SettingsConfigDict(env_prefix="JUDGEBOX_", extra="forbid")

    python: str = Field(default_factory=default_python, description="interpreter for python/pytest (default: the "
                        "runtime's, else the one running judgebox)")
    runtime: Optional[str] = Field(
        None, description="program runtime: a profile built by `judgebox runtime build` (its Python runs python, "
                          "pytest and Jupyter programs; its npm packages are on NODE_PATH), a runtime folder, or "
                          "'host' (the server's own interpreter and nothing more); unset: the built 'default' "
                          "profile, else 'host'")
    _runtime: Optional[Runtime] = PrivateAttr(None)

    @model_validator(mode="after")
    def _use_runtime(self) -> "SandboxSettings":
        """Resolve :attr:`runtime`; its interpreter becomes :attr:`python` unless one was given."""
        self._runtime = find_runtime(self.runtime)  # its ValueError names the field and the fix
        if self._runtime is not None and self._runtime.python and "python" not in self.model_fields_set:
            self.python = self._runtime.python
        return self

    @property
    def program_runtime(self) -> Optional[Runtime]:
        """The built runtime programs use, or ``None`` for the host's interpreter."""
        return self._runtime

    @field_validator("python")
    @classmethod
    def _python_runs(cls, value: str) -> str:
        """The interpreter must be an executable file (a bare name is looked up on ``PATH``)."""
        path = value if "/" in value else shutil.which(value)
        if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
            why = "no such file" if not path or not os.path.exists(path) else "not an executable file"
            raise ValueError(f"{value!r} is not a Python interpreter here ({why}); give the path of "
                             "one, e.g. --python /usr/bin/python3 (JUDGEBOX_PYTHON)")
        return value
    max_concurrency: int = Field(
        default_factory=lambda: os.cpu_count() or 1, ge=1, description="programs running at once"
    )
    max_queue: int = Field(1024, ge=0, description="requests waiting for a slot before 504")
    queue_timeout: float = Field(60.0, gt=0, description="seconds a request may wait for a slot")
    output_limit_bytes: int = Field(1 << 20, ge=1024, description="bytes per stream (stdout, stderr), cut at a "
                                    "character boundary and flagged *_truncated")
    response_limit_bytes: int = Field(
        64 << 20, ge=1 << 20, description="bytes of program output one response carries, every case or cell "
        "together (a stream past what is left is cut, and flagged, as at output_limit_bytes)")
    fetch_limit_bytes: int = Field(64 << 20, ge=1024, description="bytes of fetch_files returned per run, all "
                                   "files together; a file that would pass it is left out (as if not written)")
    default_memory_limit_MB: int = Field(
        4096, ge=16, description="MiB, used when a request sends memory_limit_MB=-1"
    )
    max_memory_limit_MB: int = Field(16384, ge=16, description="MiB, requests are clamped to this")
    max_processes: int = Field(256, ge=8, description="processes/threads per run")
    max_file_size_bytes: int = Field(256 << 20, ge=1 << 20, description="largest file a run may write")
    max_open_files: int = Field(1024, ge=64, description="open file descriptors per run")
    stack_limit_bytes: int = Field(256 << 20, description="stack size, clamped to the hard limit")
    max_run_timeout: float = Field(300.0, gt=0, description="seconds, requests are clamped to this")
    max_request_seconds: float = Field(
        600.0, gt=0, description="seconds of wall time the cases of one request may take together (from the "
        "first case's start); past it a running case is stopped (TimeLimitExceeded), the others are not run "
        "(run_result null, request_time_exceeded true)")
    isolation: Literal["full", "minimal"] = Field(
        "full", description="full: every protection (filesystem view, PID/IPC/network namespaces, disk "
        "quota, run uid, cgroups, seccomp) or refuse to start; minimal: what the host allows (containers "
        "without CAP_SYS_ADMIN), reported at GET /health")
    disk_limit_MB: int = Field(1024, ge=1, description="MiB a run may write (working folder, /tmp, "
                               "/var/tmp, /dev/shm together), used when a request sends none")
    max_disk_limit_MB: int = Field(16384, ge=1, description="MiB, requests' disk_limit_MB is clamped to this")
    allow_network: bool = Field(False, description="let programs reach the network")
    isolate_user: bool = Field(True, description="run programs as an unprivileged uid when root")
    uid_base: int = Field(61000, ge=1000, description="first uid of the per-run uid pool")
    uid_count: int = Field(1024, ge=1, description="uids in the pool (runs at once, all servers)")
    uid_lock_dir: Optional[str] = Field(
        None, description="folder of the pool's lock files, shared by every server whose runs share the kernel's "
        "uids (the replicas of a compose stack: a volume of them all), so no two runs anywhere hold one uid at "
        "once (per-uid kernel limits such as RLIMIT_NPROC and inotify instances are the host's); default: "
        "<temp dir>/judgebox-uids")
    use_cgroups: bool = Field(True, description="use memory/pids cgroups when they can be created")
    compile_cache_MB: int = Field(2048, ge=0, description="MiB of compile outputs kept (0: no compile cache)")
    prebuilt_artifacts: bool = Field(
        True, description="precompiled bits/stdc++.h per g++ flag set and a javac class-data archive"
    )
    zygote: bool = Field(True, description="fork python runs from a warm interpreter of the configured "
                         "runtime (the fork-server) instead of starting one per run; off (--no-zygote, JUDGEBOX_ZYGOTE=0): "
                         "spawn every run")
    workdir_root: Optional[str] = Field(None, description="where per-run directories are made (default: <temp dir>/judgebox-runs)")
    pod_name: str = Field(default_factory=socket.gethostname, description="executor_pod_name")
    replica_id: Optional[str] = Field(
        None, pattern=r"^[A-Za-z0-9.-]+$",
        description="name a gateway routes session calls by (first part of session ids); default pod_name")
    max_sessions: int = Field(64, ge=0, description="live sessions (kernels) at once; more is HTTP 504")
    max_session_idle_timeout: float = Field(3600.0, gt=0, description="seconds, idle_timeout is clamped to this")
    default_session_timeout: float = Field(30.0, gt=0, description="seconds per cell when a call gives none")
    session_cpu_limit: float = Field(3600.0, gt=0, description="CPU seconds one session may use in all (every process "
                                     "and kernel of it, counted by its cgroup; per kernel process without one)")
    interrupt_grace: float = Field(
        2.0, gt=0, description="seconds a timed-out cell gets to stop after SIGINT before the kernel is killed")
    max_code_bytes: int = Field(1 << 20, ge=1024, description="largest session cell (UTF-8 bytes); more is 422")
    max_batch_items: int = Field(256, ge=1, description="requests one POST /run_tests_batch may carry; more "
                                 "is 422 for the whole batch")
    max_batch_bytes: int = Field(64 << 20, ge=1024, description="bytes of one POST /run_tests_batch body; more is "
                                 "422 for the whole batch")
    max_request_bytes: int = Field(
        64 << 20, ge=1024, description="bytes of one request body on every endpoint but /run_tests_batch (which has "
        "max_batch_bytes), refused with 422 before or while it is read; embedded: the request's JSON")
    max_cases: int = Field(4096, ge=1, description="cases of one /run_tests request (and of each item of a batch); "
                           "more is 422, checked before a case is parsed into a model")

    def updated(self, **overrides: object) -> "SandboxSettings":
        """A copy with ``overrides`` (field names) validated as constructor arguments are.

        Raises:
            pydantic.ValidationError: an unknown field (a misspelt name) or a value of the wrong type
                or range; the error names each such key.
        """
        if not overrides:
            return self
        derived = set() if "python" in self.model_fields_set else {"python"}  # the runtime's: chosen again
        return type(self).model_validate({**self.model_dump(exclude=derived), **overrides})
