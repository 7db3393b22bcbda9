"""The executor: turns a request into a working directory, a compile step and run steps.

Synchronous and thread-safe. Concurrency limits live in :mod:`sandbox.admission`; per-command limits
in :mod:`sandbox.process`; users, cgroups and namespaces in :mod:`sandbox.isolation`.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from typing import Optional

from .config import SandboxSettings
from .isolation import Isolation, RunIsolation
from .languages import RECIPES, Recipe, installed_languages
from .models import (
    CommandRunResult,
    CommandRunStatus,
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
    RunTestsRequest,
    RunTestsResponse,
    decode_files,
    overall_status,
)
from .process import ProcessResult, RunLimits, run_process

#: Environment variables a program sees (nothing else is inherited from the server).
_PASS_THROUGH = ("PATH", "JAVA_HOME", "GOROOT", "RUSTUP_HOME", "CARGO_HOME")


class Executor:
    """Runs requests for one configuration. Create once and share across threads."""

    def __init__(self, settings: Optional[SandboxSettings] = None) -> None:
        self.settings = settings or SandboxSettings()
        self.isolation = Isolation(self.settings)
        self.root = self.settings.workdir_root or os.path.join(tempfile.gettempdir(), "judgebox")
        os.makedirs(self.root, mode=0o711, exist_ok=True)
        self.gocache = os.path.join(self.root, ".gocache")
        os.makedirs(self.gocache, mode=0o777, exist_ok=True)
        os.chmod(self.gocache, 0o777)

    # ----------------------------------------------------------------------------- helpers
    def languages(self) -> list[str]:
        """Installed language names."""
        return installed_languages(self.settings.python)

    def _env(self, workdir: str, recipe: Recipe, iso: RunIsolation) -> dict[str, str]:
        env = {k: os.environ[k] for k in _PASS_THROUGH if k in os.environ}
        env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
        env.update(
            HOME=workdir, TMPDIR=workdir, LANG="C.UTF-8", LC_ALL="C.UTF-8",
            PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8", PYTHONINTMAXSTRDIGITS="0",
            PYTHONDONTWRITEBYTECODE="1", GOCACHE=self.gocache, GOPATH=os.path.join(workdir, ".go"),
        )
        env.update(dict(recipe.env))
        env.update(iso.env)
        return env

    def _memory_MB(self, requested: int) -> int:
        if requested is None or requested <= 0:
            return self.settings.default_memory_limit_MB
        return min(requested, self.settings.max_memory_limit_MB)

    def _limits(self, timeout: float) -> RunLimits:
        s = self.settings
        return RunLimits.for_timeout(
            min(timeout, s.max_run_timeout), max_processes=s.max_processes,
            max_file_size=s.max_file_size_bytes, max_open_files=s.max_open_files,
            stack_bytes=s.stack_limit_bytes, output_limit=s.output_limit_bytes,
        )

    def _command(self, argv, workdir, env, timeout, iso: RunIsolation, stdin: Optional[str]) -> CommandRunResult:
        res = run_process(
            argv, cwd=workdir, env=env, limits=self._limits(timeout), stdin=(stdin or "").encode(),
            preexec=iso.preexec, user=iso.user, group=iso.group, kill_all=iso.kill_all,
            memory_exceeded=iso.memory_exceeded,
        )
        return to_command_result(res)

    def _unsupported(self, language: str) -> Optional[str]:
        if language in RECIPES and language in self.languages():
            return None
        return (f"language {language!r} is not installed on this sandbox; installed: "
                f"{', '.join(self.languages())}")

    def _workdir(self, files: dict[str, Optional[str]], code: str, recipe: Recipe, uid: Optional[int]) -> str:
        workdir = tempfile.mkdtemp(prefix="run-", dir=self.root)
        write_files(workdir, {recipe.source_name(code): code.encode()})
        write_files(workdir, decode_files(files))
        if uid is not None:
            for dirpath, dirnames, filenames in os.walk(workdir):
                for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                    os.lchown(name, uid, uid)
        os.chmod(workdir, 0o700)
        return workdir

    # ----------------------------------------------------------------------------- public API
    def run_code(self, request: RunCodeRequest) -> RunCodeResponse:
        """Compile (if needed) and run ``request.code``; see :class:`~sandbox.models.RunCodeRequest`."""
        batch = RunTestsRequest(**request.model_dump(exclude={"stdin"}), cases=[{"stdin": request.stdin}])
        resp, files = self._run(batch)
        return RunCodeResponse(
            status=resp.status, message=resp.message, compile_result=resp.compile_result,
            run_result=resp.run_results[0] if resp.run_results else None,
            executor_pod_name=resp.executor_pod_name, files=files,
        )

    def run_tests(self, request: RunTestsRequest) -> RunTestsResponse:
        """Compile once, then run every case of ``request`` in a fresh process (judgebox extension).

        Args:
            request: the batch; ``stop_on_first_failure`` skips cases after the first failing one.

        Returns:
            a :class:`~sandbox.models.RunTestsResponse` whose ``run_results[i]`` belongs to
            ``request.cases[i]`` (``None`` when skipped or when compilation failed).
        """
        return self._run(request)[0]

    def _run(self, request: RunTestsRequest) -> tuple[RunTestsResponse, dict[str, str]]:
        pod = self.settings.pod_name
        missing = self._unsupported(request.language)
        if missing:
            return RunTestsResponse(status=RunStatus.SandboxError, message=missing, executor_pod_name=pod), {}
        recipe = RECIPES[request.language]
        python = self.settings.python
        with self.isolation.for_run(self.root, self._memory_MB(request.memory_limit_MB)) as iso:
            workdir = self._workdir(request.files, request.code, recipe, iso.user)
            try:
                env = self._env(workdir, recipe, iso)
                compile_result = None
                if recipe.compile:
                    compile_result = self._command(
                        recipe.argv(recipe.compile, request.code, python), workdir, env,
                        request.compile_timeout, iso, None)
                runs: list[Optional[CommandRunResult]] = [None] * len(request.cases)
                if compile_result is None or (compile_result.status == CommandRunStatus.Finished
                                              and compile_result.return_code == 0):
                    argv = recipe.argv(recipe.run, request.code, python)
                    for i, case in enumerate(request.cases):
                        if case.files:
                            write_files(workdir, decode_files(case.files, "cases[].files"), iso.user)
                        runs[i] = r = self._command(argv, workdir, env, request.run_timeout, iso, case.stdin)
                        if request.stop_on_first_failure and overall_status(r) != RunStatus.Success:
                            break
                status = overall_status(compile_result, *runs)
                resp = RunTestsResponse(
                    status=status, message=_message(compile_result, runs), compile_result=compile_result,
                    run_results=runs, executor_pod_name=pod,
                )
                return resp, fetch(workdir, request.fetch_files)
            finally:
                shutil.rmtree(workdir, ignore_errors=True)


def _message(compile_result: Optional[CommandRunResult], runs: list[Optional[CommandRunResult]]) -> str:
    for r in (compile_result, *runs):
        if r is not None and r.status == CommandRunStatus.Error:
            return r.stderr or "sandbox error"
    return ""


def to_command_result(res: ProcessResult) -> CommandRunResult:
    """Convert a :class:`~sandbox.process.ProcessResult` to the wire model (UTF-8 with replacement)."""
    if res.spawn_error:
        return CommandRunResult(status=CommandRunStatus.Error, stderr=res.spawn_error, stdout="")
    return CommandRunResult(
        status=CommandRunStatus.TimeLimitExceeded if res.timed_out else CommandRunStatus.Finished,
        execution_time=round(res.wall_time, 6),
        cpu_time=round(res.cpu_time, 6),
        return_code=res.return_code,
        stdout=res.stdout.decode("utf-8", "replace"),
        stderr=res.stderr.decode("utf-8", "replace"),
        stdout_truncated=res.stdout_truncated,
        stderr_truncated=res.stderr_truncated,
        memory_exceeded=res.memory_exceeded,
    )


def write_files(workdir: str, files: dict[str, bytes], uid: Optional[int] = None) -> None:
    """Write ``{relative path: bytes}`` under ``workdir``, creating folders; never follows a link out."""
    real_root = os.path.realpath(workdir)
    for rel, data in files.items():
        path = os.path.join(workdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.realpath(os.path.dirname(path)).startswith(real_root):
            raise ValueError(f"files: {rel!r} resolves outside the working directory")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if uid is not None:
            os.lchown(path, uid, uid)


def fetch(workdir: str, paths: list[str]) -> dict[str, str]:
    """Read regular files under ``workdir`` (base64); missing files and links out are skipped."""
    out: dict[str, str] = {}
    real_root = os.path.realpath(workdir) + os.sep
    for rel in paths:
        path = os.path.realpath(os.path.join(workdir, rel))
        if not path.startswith(real_root) or not os.path.isfile(path):
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as f:
            out[rel] = base64.b64encode(f.read()).decode()
    return out
