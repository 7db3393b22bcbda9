"""The executor: turns a request into a working directory, a compile step and run steps.

Synchronous and thread-safe. Concurrency limits live in :mod:`judgebox.sandbox.server.admission`; per-command limits
in :mod:`judgebox.sandbox.process`; users, cgroups and namespaces in :mod:`judgebox.sandbox.isolation.unit`; the language
recipes in :mod:`judgebox.sandbox.languages`; notebook cells in :mod:`judgebox.sandbox.sessions.jupyter`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import errno
import mmap
import os
import shutil
import signal
import stat
import tempfile
import threading
import time
from typing import Callable, Iterator, Optional, Sequence

from .cancel import Cancel, Cancelled
from .case_reset import CaseReset, SnapshotTooLarge
from .config import SandboxSettings
from .errors import SandboxRequestError
from .isolation.disk import scratch_path
from .isolation.undumpable import LoaderUnavailable, class_archive, loader_argv, program_memfd
from .isolation.unit import Isolation, RunIsolation
from .languages import (
    GO_LIBRARIES,
    RECIPES,
    Recipe,
    install_hint,
    installed_languages,
    languages_on_path,
    toolchain_env,
    toolchain_version,
)
from .limits import RunLimits
from .models import (
    TESTS_FOLDER,
    CommandRunResult,
    CommandRunStatus,
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
    RunTestsRequest,
    RunTestsResponse,
    TestCaseInput,
    decode_files,
    overall_status,
)
from .process import ProcessResult, run_process
from .request_limits import RequestClock, check_cases
from .runfs import FetchBudget, fetch, remove_output, write_files
from .runtime import BUILD_COMMAND
from .speedups.compile_cache import CompileCache, compile_key, toolchain_id
from .speedups.forkserver import ForkServer, ForkServerUnavailable, is_script_command
from .speedups.gostd import GoStd, fresh_trim
from .speedups.jvm import javac_archives, javac_key
from .speedups.pch import pch_key, precompiled_headers
from .speedups.preload import usable_preload
from .textcap import JsonBudget, decode_capped

#: Most preload sets (``forkserver_preload``) with their own fork-server per executor.
PRELOAD_SETS = 8
#: Seconds a preload set's fork-server must have been unused before a new set may replace it.
PRELOAD_IDLE_S = 60.0


class Executor:
    """Runs requests for one configuration. Create once and share across threads.

    Args:
        settings: limits and isolation switches (default: :class:`SandboxSettings` from env).

    The installed languages and the toolchain environment are probed once, here, not per request.
    A language whose toolchain the per-run uid cannot execute (e.g. under a 0700 ``/root``) is not
    offered: it answers ``SandboxError`` saying which folder to open.
    """

    def __init__(self, settings: Optional[SandboxSettings] = None) -> None:
        self.settings = settings or SandboxSettings()
        python = self.settings.python
        runtime = self.settings.program_runtime
        # the module probes (interpreters, ``node``) run while the isolation is probed: the
        # toolchains the view shows are those on PATH, which the probes only narrow by module
        probes = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgebox-probe")
        usable = probes.submit(installed_languages, python, runtime.node_path if runtime else None)
        probes.shutdown(wait=False)
        on_path = {name: recipe.executable(python) for name, recipe in languages_on_path(python).items()}
        # not "<tmp>/judgebox": a folder of the package's name in a process's working folder (a
        # script run from /tmp) would shadow an editable install of ``judgebox`` for that process
        self.root = self.settings.workdir_root or os.path.join(tempfile.gettempdir(), "judgebox-runs")
        os.makedirs(self.root, mode=0o711, exist_ok=True)
        self.gocache = shared_go_cache(self.root)
        # the precompiled headers and javac's archive are built by the server and read by every run
        prebuilt_dirs = [os.path.join(self.root, d) for d in (".pch", ".jvm")]
        for d in prebuilt_dirs:
            os.makedirs(d, mode=0o755, exist_ok=True)
        homes = toolchain_env()  # the runtime's folder is shown read-only, as a toolchain's
        self.isolation = Isolation(self.settings, sorted(set(on_path.values())), self.root,
                                   [self.gocache, *prebuilt_dirs],
                                   [*(homes[k] for k in ("RUSTUP_HOME", "CARGO_HOME", "JAVA_HOME", "GOROOT") if k in homes),
                                    *([runtime.folder] if runtime else [])])
        found = {name: on_path[name] for name in usable.result()}
        blocked = self.isolation.unreachable if self.isolation.uids else {}
        #: languages whose toolchain the run uid cannot execute: name -> (program, folder lacking o+x)
        self._blocked = {n: (p, blocked[p]) for n, p in found.items() if p in blocked}
        self._installed = tuple(n for n in found if n not in self._blocked)
        self._base_env = dict(homes)
        s = self.settings
        #: compile outputs by content (server-private, outside every run folder); ``None``: off
        self.compile_cache = (CompileCache(os.path.join(self.root, ".compile-cache"), s.compile_cache_MB << 20)
                              if s.compile_cache_MB else None)
        #: precompiled ``bits/stdc++.h`` per g++ flag set, javac's class-data archive (read-only for
        #: runs; ``None``: off or not installed), each with the function that keys it from a command
        self.pch = (precompiled_headers(os.path.join(self.root, ".pch"))
                    if s.prebuilt_artifacts and "cpp" in self._installed else None)
        self.javac_archive = (javac_archives(os.path.join(self.root, ".jvm"))
                              if s.prebuilt_artifacts and "java" in self._installed else None)
        self._prebuilt = [(p, k) for p, k in ((self.pch, pch_key), (self.javac_archive, lambda argv, _: javac_key(argv)))
                          if p]
        self._toolchain_ids: dict[str, str] = {}
        #: Go's standard library in the shared build cache (``None``: off, or Go not installed)
        go = next((found[n] for n in ("go", "go_test") if n in self._installed), None)
        self.go_std = (GoStd(self.gocache, go, self.env(os.path.join(self.root, ".gocache"), RunIsolation(),
                                                         RECIPES["go"]), self._toolchain_id(RECIPES["go"]))
                       if s.prebuilt_artifacts and go else None)
        #: the Python fork-server (``None``: off, or python not installed)
        self.forkserver = (ForkServer(python, self.env(os.path.join(self.root, ".forkserver"), RunIsolation()),
                                      os.path.join(self.root, ".forkserver"), s.stack_limit_bytes)
                           if s.zygote and "python" in self._installed else None)
        #: fork-servers with preload modules, by their sorted module names (at most
        #: :data:`PRELOAD_SETS`; a request with another set is forked from the plain one)
        self._preloaded: dict[tuple[str, ...], ForkServer] = {}
        self._preload_used: dict[tuple[str, ...], float] = {}  # set -> last use (time.monotonic())
        self._replaced: list[ForkServer] = []  # replaced preload fork-servers: their counts stay counted
        self._preloaded_lock = threading.Lock()

    # ----------------------------------------------------------------------------- building blocks
    def languages(self) -> list[str]:
        """Installed language names, sorted (a recipe whose toolchain is on ``PATH``)."""
        return list(self._installed)

    def env(self, workdir: str, iso: RunIsolation, recipe: Optional[Recipe] = None) -> dict[str, str]:
        """The complete environment of a program in ``workdir`` (nothing else is inherited).

        ``HOME`` and ``TMPDIR`` are the working directory; Python gets ``PYTHONUNBUFFERED=1``,
        ``PYTHONIOENCODING=utf-8`` and ``PYTHONINTMAXSTRDIGITS=0``; Go gets the shared ``GOCACHE``
        and the Debian Go libraries on ``GOPATH`` (:data:`GO_LIBRARIES`); Node.js the runtime's
        ``node_modules`` as ``NODE_PATH``.
        """
        env = dict(self._base_env)
        env.update(
            HOME=workdir, TMPDIR=workdir, LANG="C.UTF-8", LC_ALL="C.UTF-8",
            PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8", PYTHONINTMAXSTRDIGITS="0",
            PYTHONDONTWRITEBYTECODE="1", GOCACHE=self.gocache,
            GOPATH=":".join([os.path.join(workdir, ".go"), *GO_LIBRARIES]),
        )
        runtime = self.settings.program_runtime
        if runtime is not None and runtime.node_path:
            env["NODE_PATH"] = runtime.node_path
        if recipe is not None:
            env.update(dict(recipe.env))
        env.update(iso.env)
        return env

    def _before_go_build(self, recipe: Recipe) -> None:
        """For a Go run: the shared cache's trim record made fresh (Go >= 1.21 fails a build that
        cannot record its trim on the read-only cache) and the standard library's build started."""
        if recipe.name in ("go", "go_test"):
            fresh_trim(self.gocache)
            if self.go_std is not None:
                self.go_std.ensure()

    def memory_MB(self, requested: Optional[int]) -> int:
        """The memory limit in MiB for a request's ``memory_limit_MB`` (``-1``/``None`` = default, clamped)."""
        if requested is None or requested <= 0:
            return self.settings.default_memory_limit_MB
        return min(requested, self.settings.max_memory_limit_MB)

    def limits(self, timeout: float, output_left: Optional[int] = None, wall_clock: bool = True) -> RunLimits:
        """Per-command limits for a timeout in seconds (clamped to ``settings.max_run_timeout``);
        ``output_left``: bytes of output the response may still carry (each stream gets half);
        ``wall_clock``: the run step's time rule, ``False`` for the compile step's (see :class:`RunLimits`)."""
        s = self.settings
        cap = s.output_limit_bytes if output_left is None else max(0, min(s.output_limit_bytes, output_left // 2))
        return RunLimits.for_timeout(
            min(timeout, s.max_run_timeout), max_processes=s.max_processes,
            max_file_size=s.max_file_size_bytes, max_open_files=s.max_open_files,
            stack_bytes=s.stack_limit_bytes, output_limit=cap, wall_clock=wall_clock,
        )

    def unsupported(self, language: str) -> Optional[str]:
        """``None`` if ``language`` can run here, else the SandboxError message listing installed ones."""
        if language in self._installed:
            return None
        installed = f"installed: {', '.join(self._installed)}"
        if language in self._blocked:
            program, folder = self._blocked[language]
            return (f"language {language!r} is not usable on this sandbox: its toolchain {program} is not "
                    f"executable by the run user ({folder} lacks o+x; chmod o+x {folder}); {installed}")
        recipe = RECIPES.get(language)
        if recipe is not None and recipe.module and shutil.which(recipe.executable(self.settings.python)):
            return (f"language {language!r} is not installed on this sandbox: its interpreter "
                    f"{self.settings.python} cannot import {recipe.module}; build the program runtime with "
                    f"`{BUILD_COMMAND.format(name='default')}` (or give an interpreter that has it); {installed}")
        return f"language {language!r} is not installed on this sandbox: {install_hint(language)}; {installed}"

    @contextlib.contextmanager
    def workdir(self, files: dict[str, bytes], iso: RunIsolation) -> Iterator[str]:
        """The request's private working directory (``iso.workdir``, made by the isolation and
        removed with it) with ``files`` written into it, owned by the run uid.

        Args:
            files: ``{path: content bytes}`` (already validated by the request model); an absolute
                path is written to the run's own scratch mount (:func:`on_disk`).
            iso: the request's isolation (:meth:`judgebox.sandbox.isolation.unit.Isolation.for_run`).

        Raises:
            SandboxRequestError: (422) the files do not fit the run's disk quota, or one is absolute
                and the run has no private view.
        """
        _write_request_files(iso, files, "files")
        yield iso.workdir

    def command(self, argv: Sequence[str], workdir: str, env: dict[str, str], timeout: float,
                iso: RunIsolation, stdin: Optional[str], cancel: Optional[Cancel] = None,
                output_left: Optional[int] = None, wall_clock: bool = True,
                preload: tuple[str, ...] = (), pass_fds: Sequence[int] = (),
                exec_fds: Sequence[int] = ()) -> CommandRunResult:
        """Run one command under the limits for ``timeout`` seconds; stdin is a pipe closed after
        ``stdin``; ``output_left``, ``wall_clock``: see :meth:`limits`; ``preload``: a Python script
        is forked with these modules imported (:meth:`forkserver_for`); ``pass_fds``: descriptors the
        command keeps (a sealed JVM tests' program's classes), ``exec_fds`` those of them its exec
        closes (a sealed program run as ``/proc/self/fd/<n>``).

        Raises:
            Cancelled: ``cancel`` was cancelled before the command started; cancelling it while the
                command runs kills the command's processes (it then returns as killed).
        """
        limits = self.limits(timeout, output_left, wall_clock)
        if cancel is None:
            return to_command_result(self._process(argv, workdir, env, limits, iso, stdin, iso.preexec,
                                                    preload=preload, pass_fds=pass_fds, exec_fds=exec_fds))
        cancel.check()
        kill = CommandKill(iso)
        with cancel.watching(kill):
            try:
                res = self._process(argv, workdir, env, limits, iso, stdin, kill.preexec, kill.started, preload,
                                    pass_fds, exec_fds)
            finally:
                kill.finished()
        return to_command_result(res)

    def _process(self, argv: Sequence[str], workdir: str, env: dict[str, str], limits: RunLimits,
                 iso: RunIsolation, stdin: Optional[str], preexec: Optional[Callable[[], None]],
                 started: Optional[Callable[[int], None]] = None, preload: tuple[str, ...] = (),
                 pass_fds: Sequence[int] = (), exec_fds: Sequence[int] = ()) -> ProcessResult:
        fork = (self.forkserver_for(preload) if self.forkserver is not None and iso.setup is not None
                and not pass_fds and is_script_command(argv, self.settings.python) else None)
        return run_process(
            argv, cwd=workdir, env=env, limits=limits, stdin=(stdin or "").encode(),
            preexec=preexec, user=iso.user, group=iso.group, kill_all=iso.kill_all,
            memory_exceeded=iso.memory_exceeded, seal=iso.seal, disk_exceeded=iso.disk_exceeded,
            cpu_seconds=iso.cpu_seconds, spawning=iso.spawning, forkserver=fork, setup=iso.setup,
            started=started, pids=iso.pids, pass_fds=pass_fds, exec_fds=exec_fds,
        )

    def forkserver_for(self, preload: tuple[str, ...]) -> Optional[ForkServer]:
        """The fork-server whose children start with the modules ``preload`` (sorted, validated
        standard-library names) imported (``None``: the fork-server is off).

        The plain one for ``()``. At most :data:`PRELOAD_SETS` sets have a fork-server of their own;
        when all are taken, a new set replaces the least recently used one once that one has been
        idle for :data:`PRELOAD_IDLE_S` seconds, and is forked from the plain one until then. So sets
        asked for once (a client's stray names) cannot keep the harness's set cold for good."""
        plain = self.forkserver
        if not preload or plain is None:
            return plain
        now, evicted = time.monotonic(), None
        with self._preloaded_lock:
            server = self._preloaded.get(preload)
            if server is None:
                if len(self._preloaded) >= PRELOAD_SETS:
                    idlest = min(self._preload_used, key=self._preload_used.__getitem__)
                    if now - self._preload_used[idlest] < PRELOAD_IDLE_S:
                        return plain
                    evicted = self._preloaded.pop(idlest)
                    del self._preload_used[idlest]
                    self._replaced.append(evicted)
                server = self._preloaded[preload] = ForkServer(
                    plain.python, plain.env, plain.home, plain.stack_bytes, preload=preload)
            self._preload_used[preload] = now
        if evicted is not None:  # a run that already holds it spawns instead (ForkServerUnavailable)
            threading.Thread(target=evicted.close, daemon=True).start()
        return server

    def forkserver_stats(self) -> Optional[dict[str, int]]:
        """The fork-servers' counts together (:meth:`ForkServer.stats`); ``None``: the fork-server is off."""
        if self.forkserver is None:
            return None
        with self._preloaded_lock:  # the replaced ones too: the counters never go down
            servers = [self.forkserver, *self._preloaded.values(), *self._replaced]
        return {k: sum(s.stats()[k] for s in servers) for k in self.forkserver.stats()}

    def compile(self, recipe: Recipe, code: str, files: dict[str, bytes], workdir: str, env: dict[str, str],
                timeout: float, iso: RunIsolation, cancel: Optional[Cancel] = None,
                cpp_std: Optional[str] = None) -> CommandRunResult:
        """The compile step of ``recipe`` for ``code`` (``files`` are all files written into
        ``workdir`` before it): restored from the compile cache when an identical compile succeeded
        before, else run (with a precompiled header for g++ when one is ready) and, on success,
        stored. Identical compiles in flight at once run once.

        Raises:
            Cancelled: see :meth:`command`.
        """
        argv = recipe.argv(recipe.compile or (), code, self.settings.python, cpp_std)
        run_argv = argv + self.speedups(argv, code)
        cache = self.compile_cache
        if cache is None or not recipe.outputs:
            return self.command(run_argv, workdir, env, timeout, iso, None, cancel, wall_clock=False)
        key = compile_key(recipe.name, argv, self._toolchain_id(recipe), files)
        with cache.flight(key):
            hit = cache.lookup(key)
            if hit is not None:
                try:
                    write_files(workdir, {rel: data for rel, (data, _) in hit.files.items()}, iso.user)
                    for rel, (_, mode) in hit.files.items():
                        os.chmod(os.path.join(workdir, rel), mode)
                    return CommandRunResult(status=CommandRunStatus.Finished, execution_time=round(hit.seconds, 6),
                                            cpu_time=0.0, return_code=0, stdout=hit.stdout, stderr=hit.stderr)
                except (OSError, ValueError):
                    pass  # a request file is in the way: compile as on a miss
            result = self.command(run_argv, workdir, env, timeout, iso, None, cancel, wall_clock=False)
            if (result.status == CommandRunStatus.Finished and result.return_code == 0
                    and not (result.stdout_truncated or result.stderr_truncated)):
                cache.store(key, workdir, recipe.outputs, result.stdout, result.stderr)
            return result

    def speedups(self, argv: Sequence[str], code: str = "") -> list[str]:
        """Options that make compile command ``argv`` of main source ``code`` use a ready prebuilt
        artifact (a precompiled header, javac's class-data archive); asking starts the artifact's build
        if it has not yet."""
        out: list[str] = []
        for prebuilt, key_of in self._prebuilt:
            key = key_of(argv, code)
            if key is not None:
                out += prebuilt.args(key)
        return out

    def warm_up(self) -> None:
        """Start the Python fork-server, and start building the prebuilt artifacts of the default
        compile commands in the background."""
        if self.forkserver is not None:
            with contextlib.suppress(ForkServerUnavailable):
                self.forkserver.ready()
        self._start_prebuilds()

    def prebuild(self) -> dict[str, bool]:
        """Build the prebuilt artifacts of the default compile commands and Go's standard library
        now, waiting for each (``judgebox prebuild``: at install or image build time, so a fresh
        server's first compiles do not wait for them). Returns ``{artifact: ready}``."""
        return {what: bool(future.result()) for what, future in self._start_prebuilds().items()}

    def _start_prebuilds(self) -> "dict[str, concurrent.futures.Future]":
        """Start (once) the builds of the default compile commands' prebuilt artifacts and of Go's
        standard library; ``{artifact: future of its readiness}``."""
        started: "dict[str, concurrent.futures.Future]" = {}
        for name, what, prebuilt, key_of in (("cpp", "precompiled bits/stdc++.h", self.pch, pch_key),
                                             ("java", "javac class-data archive", self.javac_archive,
                                              lambda argv, _: javac_key(argv))):
            recipe = RECIPES[name]
            key = key_of(recipe.argv(recipe.compile, "", self.settings.python), "") if recipe.compile else None
            if prebuilt is not None and key is not None:
                started[what] = prebuilt.ensure(key)
        if self.go_std is not None:
            started["go standard library"] = self.go_std.ensure()
        return started

    def _toolchain_id(self, recipe: Recipe) -> str:
        if recipe.name not in self._toolchain_ids:
            python = self.settings.python
            self._toolchain_ids[recipe.name] = toolchain_id(recipe.executable(python),
                                                            toolchain_version(recipe.name, python))
        return self._toolchain_ids[recipe.name]

    # ----------------------------------------------------------------------------- public API
    def run_code(self, request: RunCodeRequest, cancel: Optional[Cancel] = None) -> RunCodeResponse:
        """Compile (if needed) and run ``request.code`` once (SandboxFusion ``/run_code``).

        Args:
            request: the request.
            cancel: when cancelled (from any thread), the running command is killed and the
                request ends as ``SandboxError`` with a message saying so.

        Returns:
            a :class:`~judgebox.sandbox.models.RunCodeResponse`; an unsupported language is ``SandboxError``
            with the installed languages in ``message``. Never raises for a program's behaviour.
        """
        resp, files = self._run(request, [TestCaseInput(stdin=request.stdin)], cancel=cancel)
        return RunCodeResponse(
            status=resp.status, message=resp.message, compile_result=resp.compile_result,
            run_result=resp.run_results[0] if resp.run_results else None,
            executor_pod_name=resp.executor_pod_name, files=files,
        )

    def run_tests(self, request: RunTestsRequest, cancel: Optional[Cancel] = None) -> RunTestsResponse:
        """Compile once, then run every case of ``request`` in a fresh process (judgebox extension).

        Args:
            request: the batch; ``stop_on_first_failure`` skips cases after the first failing one.
            cancel: as for :meth:`run_code`.

        Returns:
            a :class:`~judgebox.sandbox.models.RunTestsResponse` whose ``run_results[i]`` belongs to
            ``request.cases[i]`` (``None`` when skipped or when compilation failed).

        Raises:
            SandboxRequestError: (422) more than ``max_cases`` cases (the faces refuse them before
                parsing them; this is the engine's own check).
        """
        check_cases(request, self.settings)
        return self._run(request, request.cases, request.stop_on_first_failure, cancel)[0]

    def _run(self, request: RunCodeRequest, cases: list[TestCaseInput], stop_on_first_failure: bool = False,
             cancel: Optional[Cancel] = None) -> tuple[RunTestsResponse, dict[str, str]]:
        try:
            return self._run_steps(request, cases, stop_on_first_failure, cancel)
        except Cancelled as exc:
            return RunTestsResponse(status=RunStatus.SandboxError, message=str(exc),
                                    executor_pod_name=self.settings.pod_name), {}

    def _run_steps(self, request: RunCodeRequest, cases: list[TestCaseInput], stop_on_first_failure: bool,
                   cancel: Optional[Cancel]) -> tuple[RunTestsResponse, dict[str, str]]:
        pod = self.settings.pod_name
        missing = self.unsupported(request.language)
        if missing:
            return RunTestsResponse(status=RunStatus.SandboxError, message=missing, executor_pod_name=pod), {}
        tests_language = getattr(request, "tests_language", None)
        missing = self.unsupported(tests_language) if tests_language else None
        if missing:
            return RunTestsResponse(status=RunStatus.SandboxError, message=f"tests_language: {missing}",
                                    executor_pod_name=pod), {}
        recipe = RECIPES[request.language]
        python = self.settings.python
        files = {recipe.source_name(request.code): recipe.text(request.code).encode(), **decode_files(request.files)}
        with self.isolation.for_run(self.root, self.memory_MB(request.memory_limit_MB),
                                    request.disk_limit_MB) as iso, \
                self.workdir(files, iso) as workdir, contextlib.ExitStack() as held:
            env = self.env(workdir, iso, recipe)
            self._before_go_build(recipe)
            preload = usable_preload(request.forkserver_preload, [*files, *(p for c in cases for p in c.files)])
            for path in request.fetch_files:  # an absolute path is refused before anything runs
                on_disk(iso, path, "fetch_files")
            for i, case in enumerate(cases):
                for field, paths in (("files", case.files), ("fetch_files", case.fetch_files)):
                    for path in paths:
                        on_disk(iso, path, f"cases[{i}].{field}")
            compile_result = None
            if recipe.compile:
                compile_result = self.compile(recipe, request.code, files, workdir, env, request.compile_timeout,
                                              iso, cancel, request.cpp_std)
            tests = getattr(request, "tests_program", None)
            tests_dir, tests_compile = (os.path.join(workdir, TESTS_FOLDER), None) if tests is not None else (None, None)
            tests_fds: list[int] = []
            exec_fds: list[int] = []
            if tests is not None and _compiled(compile_result):
                tests_recipe = RECIPES[tests_language or request.language]
                tests_compile, tests_argv, tests_fds, exec_fds = self._tests_program(tests_recipe, tests, tests_dir, env,
                                                                                     request, iso, cancel)
                held.callback(lambda: [os.close(fd) for fd in tests_fds])
            absolute = {p: data for p, data in files.items() if p.startswith("/")}  # emptied by each reset
            runs: list[Optional[CommandRunResult]] = [None] * len(cases)
            budget = FetchBudget(self.settings.fetch_limit_bytes)  # the request's, all cases together
            output = JsonBudget(self.settings.response_limit_bytes)  # the same for the output, as JSON
            compile_result = charged(compile_result, output)
            clock = RequestClock(min(self.settings.max_request_seconds,  # the cases' time, all together
                                     getattr(request, "total_timeout", None) or self.settings.max_request_seconds))
            tests_compile = charged(tests_compile, output)
            if _compiled(compile_result) and _compiled(tests_compile):
                argv = recipe.argv(recipe.run, request.code, python) + list(request.args)
                if tests is not None:  # the tests' program runs, in its folder, and starts the code's
                    argv = tests_argv + ["--", *argv]
                try:
                    reset = CaseReset(workdir, iso.scratch, iso.user) if len(cases) > 1 else None
                except SnapshotTooLarge as exc:  # the compile step's own doing (sparse outputs): its failure
                    compile_result = _failed_compile(compile_result, str(exc))
                    cases = []
                for i, case in enumerate(cases):
                    timeout = clock.timeout(request.run_timeout)
                    if timeout is None:  # the rest is not run (run_result None, request_time_exceeded)
                        break
                    if i and reset is not None:
                        reset.restore()  # every case starts from the same files (judgebox.sandbox.case_reset)
                        _write_request_files(iso, absolute, "files")
                    capped = output.left // 2 < self.settings.output_limit_bytes  # each stream's cap is the budget's
                    runs[i] = r = charged(self._case_files(iso, case, i)
                                          or self.command(argv, tests_dir or workdir, env, timeout, iso, case.stdin,
                                                          cancel, output.left, preload=preload, pass_fds=tests_fds,
                                                          exec_fds=exec_fds),
                                          output, capped)
                    if case.fetch_files:
                        r.files = fetch_run_files(iso, case.fetch_files, budget)
                    if clock.ran(r) or (stop_on_first_failure and overall_status(r) != RunStatus.Success):
                        break
            status = overall_status(compile_result, tests_compile, *runs)
            message = _message(compile_result, runs, request.compile_timeout)
            if not _compiled(tests_compile):
                message = "tests_program: its compile step failed (the tests', not the code's)"
            if clock.exceeded:
                status = RunStatus.Failed if status == RunStatus.Success else status
                message = message or clock.note(runs)
            resp = RunTestsResponse(status=status, message=message, compile_result=compile_result, run_results=runs,
                                    executor_pod_name=pod, request_time_exceeded=clock.exceeded,
                                    tests_compile_result=tests_compile)
            return resp, fetch_run_files(iso, request.fetch_files, budget)


    def _tests_program(self, recipe: Recipe, tests: str, folder: str, env: dict[str, str], request: RunTestsRequest,
                       iso: RunIsolation, cancel: Optional[Cancel]) -> tuple[Optional[CommandRunResult], list[str],
                                                                             list[int], list[int]]:
        """Write ``tests`` (the request's ``tests_program``) into ``folder`` and compile it there
        (``None`` for an interpreted language). Then, when the server is root, the folder and what it
        holds become the server's: a compiled language keeps only its compile outputs (a native
        program execute-only: the code's process can neither read the tests nor their expected values,
        nor replace them), in a folder it may pass through but not list; a JVM's classes leave the
        folder for a sealed archive in memory that only the tests' process holds
        (:func:`judgebox.sandbox.isolation.undumpable.class_archive`); an interpreted one's program
        stays readable (its interpreter reads it), so such a harness sends what must stay secret on
        stdin. A program run by a system interpreter (the JVM, Node.js, Python) is started through an
        execute-only copy of its dynamic loader, so its process is non-dumpable from its first
        instruction (:mod:`judgebox.sandbox.isolation.undumpable`). Returns the compile step's result,
        the command that runs the tests' program (in ``folder``), the descriptors it is given (the
        caller closes them) and those of them its exec closes. A compiled program leaves the folder
        for an execute-only memfd that the command runs as ``/proc/self/fd/<n>``
        (:func:`judgebox.sandbox.isolation.undumpable.program_memfd`): nothing is left that the
        code's process could run as an oracle of the tests."""
        source = {recipe.source_name(tests): recipe.text(tests).encode()}
        os.mkdir(folder, 0o755)
        if iso.user is not None:
            os.chown(folder, iso.user, iso.group if iso.group is not None else iso.user)
        write_files(folder, source, iso.user)
        result = None
        if recipe.compile:
            result = self.compile(recipe, tests, source, folder, env, request.compile_timeout, iso, cancel,
                                  request.cpp_std)
        argv, fds, exec_fds = recipe.argv(recipe.run, tests, self.settings.python), [], []
        if os.geteuid() == 0:
            compiled = recipe.compile is not None and (result is None or result.return_code == 0)
            if compiled and "-cp" in argv and any(k.endswith(".class") for k in recipe.outputs):
                fd = class_archive(folder)
                fds.append(fd)
                at = argv.index("-cp") + 1
                argv[at] = ":".join(f"/proc/self/fd/{fd}" if p == "." else p for p in argv[at].split(":"))
                # the JDK's Attach API (jcmd, agents) needs only the same uid: the solution's process
                # could otherwise load code into the tests' JVM (red team, issue 38)
                argv.insert(1, "-XX:+DisableAttachMechanism")
            elif compiled and not os.path.isabs(argv[0]) and os.sep in argv[0]:  # the compiled program itself
                fd = program_memfd(os.path.join(folder, argv[0]))
                fds.append(fd)
                exec_fds.append(fd)
                argv[0] = f"/proc/self/fd/{fd}"
            seal_folder(folder, keep=recipe.outputs if compiled else None)
            if not exec_fds and (os.path.isabs(argv[0]) or os.sep not in argv[0]):  # an interpreter
                try:
                    argv = loader_argv(argv, folder, env.get("PATH"))
                except LoaderUnavailable as exc:
                    for fd in fds:
                        os.close(fd)
                    raise SandboxRequestError(f"tests_program: {recipe.name}'s tests cannot run non-dumpable "
                                              f"({exc}); this server cannot keep their process from the code's") from exc
        return result, argv, fds, exec_fds

    @staticmethod
    def _case_files(iso: RunIsolation, case: TestCaseInput, index: int) -> Optional[CommandRunResult]:
        """Write a case's extra files and remove its ``fetch_files`` (an earlier case's output must not
        count); an ``Error`` result if one cannot be written (the request model rejects every clash
        it can see: a case file under the program's own file or a request file)."""
        if not case.files and not case.fetch_files:
            return None
        try:
            for path in case.fetch_files:
                remove_output(*on_disk(iso, path, f"cases[{index}].fetch_files"))
            _write_request_files(iso, decode_files(case.files, "cases[].files"), f"cases[{index}].files")
        except SandboxRequestError:
            raise
        except (OSError, ValueError) as exc:
            return CommandRunResult(status=CommandRunStatus.Error, stdout="",
                                    stderr=f"cases[{index}].files could not be written: {exc}")
        return None


class CommandKill:
    """Kills one command's processes on cancellation: every process of the run's isolation unit
    (``kill_all``: cgroup, run uid) and the command's process group.

    For the process group, the child records its pid in shared memory before exec, and only when it
    lives in the server's own pid namespace (a pid from a run's pid namespace means another process
    here). The pid is used only while the command has not been reaped (:meth:`finished`), so a
    recycled pid is never signalled.
    """

    def __init__(self, iso: RunIsolation) -> None:
        self._iso = iso
        self._ns = pid_namespace()
        self._pid = mmap.mmap(-1, 8)  # MAP_SHARED | MAP_ANONYMOUS: the forked child's write shows here
        self._lock = threading.Lock()
        self._done = False

    def preexec(self) -> None:
        """Child side, before exec: record the pid (same pid namespace only), then the isolation's
        own pre-exec."""
        if self._ns is not None and pid_namespace() == self._ns:
            self._pid[:8] = os.getpid().to_bytes(8, "little")
        if self._iso.preexec is not None:
            self._iso.preexec()

    def started(self, pid: int) -> None:
        """Server side: the command was started as ``pid`` (the server's view of it, valid in any
        namespace; a fork-server's child records nothing itself)."""
        self._pid[:8] = pid.to_bytes(8, "little")

    def finished(self) -> None:
        """The command was reaped: its pid may be reused from now on."""
        with self._lock:
            self._done = True

    def __call__(self) -> None:
        # Again and again until the command is reaped (at most 2 s): a child cancelled between its
        # fork and its pre-exec has neither recorded its pid nor joined the run's cgroup yet.
        deadline = time.monotonic() + 2.0
        while True:
            with self._lock:
                if self._done:
                    return
                pid = int.from_bytes(self._pid[:8], "little")
                if pid:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(pid, signal.SIGKILL)
            if self._iso.kill_all is not None:
                self._iso.kill_all()
            if time.monotonic() >= deadline:
                return
            time.sleep(0.02)


def pid_namespace() -> Optional[str]:
    """The pid namespace of the calling process (``/proc/self/ns/pid``), ``None`` if unknown."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def shared_go_cache(root: str) -> str:
    """Make ``<root>/.gocache``, Go's build cache shared by all runs, and return its path.

    It and its 256 shard folders belong to the server's user with mode 0755: runs as the server's
    own user fill it, runs under a per-run uid only read it (Go builds fine from a read-only cache).
    A run uid that could write there could plant objects that later runs link (cache poisoning), so
    shards a run uid made are removed and remade.
    """
    cache = os.path.join(root, ".gocache")
    me = os.geteuid()
    for shard in ("", *(f"{i:02x}" for i in range(256))):
        path = os.path.join(cache, shard)
        with contextlib.suppress(FileNotFoundError):
            if os.lstat(path).st_uid != me:
                shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path, mode=0o755, exist_ok=True)
        os.chmod(path, 0o755)
    return cache


def on_disk(iso: RunIsolation, path: str, field: str) -> tuple[str, str]:
    """Where a request's validated ``path`` is on the host: ``(folder, path relative to it)``; the
    working folder for a relative path, the run's own scratch mount for an absolute one
    (:data:`~judgebox.sandbox.isolation.disk.SCRATCH_MOUNTS`).

    Raises:
        SandboxRequestError: (422) ``path`` is absolute and the run has no private view (``--isolation
            minimal``: ``/tmp`` there is the host's).
    """
    if not path.startswith("/"):
        return iso.workdir, path
    if not iso.scratch:
        raise SandboxRequestError(
            f"{field}: {path!r} is an absolute path, which only full isolation allows (its /tmp, /var/tmp, "
            "/dev/shm and /mnt are the run's own); this sandbox runs with --isolation minimal, where they "
            "are the host's: give a path relative to the working folder")
    return scratch_path(iso.scratch, path)


def fetch_run_files(iso: RunIsolation, paths: list[str], budget: FetchBudget) -> dict[str, str]:
    """:func:`~judgebox.sandbox.runfs.fetch` of request paths (:func:`on_disk`), in their order,
    keyed as given."""
    out: dict[str, str] = {}
    for path in paths:
        folder, rel = on_disk(iso, path, "fetch_files")
        got = fetch(folder, [rel], budget)
        if rel in got:
            out[path] = got[rel]
    return out


def _write_request_files(iso: RunIsolation, files: dict[str, bytes], field: str) -> None:
    """:func:`~judgebox.sandbox.runfs.write_files` of request paths (:func:`on_disk`), owned by the run
    uid; a full disk is the request's own excess (422)."""
    groups: dict[str, dict[str, bytes]] = {}
    for path, data in files.items():
        folder, rel = on_disk(iso, path, field)
        groups.setdefault(folder, {})[rel] = data
    try:
        for folder, group in groups.items():
            write_files(folder, group, iso.user)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise
        size = sum(len(d) for d in files.values())
        raise SandboxRequestError(f"{field}: {size} bytes do not fit the run's disk (disk_limit_MB, "
                                  f"{exc.strerror}); send smaller files or a larger disk_limit_MB") from None


def _compiled(result: Optional[CommandRunResult]) -> bool:
    """Whether a compile step succeeded or there was none."""
    return result is None or (result.status == CommandRunStatus.Finished and result.return_code == 0)


def seal_folder(folder: str, keep: Optional[Sequence[str]] = None) -> None:
    """``folder`` and everything in it become root's, with no write permission for anyone else (no
    link is followed; the folder was just filled by a compile step of the run's uid). With ``keep``
    (compile outputs: fixed names relative to ``folder``, or ``"**/*.ext"``), everything else is
    removed and what is kept becomes execute-only when it is a program (others may run it, not read
    it) or read-only (a JVM's classes), in a folder others may pass through but not list."""
    if keep is not None:
        kept = {os.path.normpath(k) for k in keep if "*" not in k}
        suffixes = tuple(k.rsplit("*", 1)[1] for k in keep if "*" in k)
        for root, dirs, names in os.walk(folder, topdown=False):
            for n in names:
                path = os.path.join(root, n)
                rel = os.path.relpath(path, folder)
                if rel not in kept and not (suffixes and n.endswith(suffixes)):
                    os.unlink(path)
    for root, dirs, names in os.walk(folder):
        for name in (root, *(os.path.join(root, n) for n in (*dirs, *names))):
            st = os.lstat(name)
            if stat.S_ISLNK(st.st_mode):
                continue
            os.chown(name, 0, 0, follow_symlinks=False)
            mode = stat.S_IMODE(st.st_mode) & ~0o022
            if keep is not None:
                mode = 0o711 if stat.S_ISDIR(st.st_mode) else (0o711 if mode & 0o100 else 0o644)
            os.chmod(name, mode)


def _failed_compile(result: Optional[CommandRunResult], why: str) -> CommandRunResult:
    """The compile step as failed (return code 1) because of what it left behind, ``why`` in its stderr."""
    note = f"[judgebox] {why}\n"
    if result is None:
        return CommandRunResult(status=CommandRunStatus.Finished, return_code=1, stdout="", stderr=note)
    return result.model_copy(update={"return_code": 1, "stderr": (result.stderr or "") + note})


def charged(result: Optional[CommandRunResult], output: JsonBudget, capped: bool = False) -> Optional[CommandRunResult]:
    """``result`` with its stdout and stderr cut to what is left of the response's ``output`` budget
    (bytes of JSON, :class:`~judgebox.sandbox.textcap.JsonBudget`), flagged ``*_truncated`` where cut
    and ``output_budget_exhausted`` when the budget cut anything (here, or, ``capped``, when the
    command ran with its streams capped below ``output_limit_bytes`` by what was left of it)."""
    if result is None:
        return None
    stdout, out_cut = output.take(result.stdout or "")
    stderr, err_cut = output.take(result.stderr or "")
    if not (out_cut or err_cut):
        if capped and (result.stdout_truncated or result.stderr_truncated):
            return result.model_copy(update={"output_budget_exhausted": True})
        return result
    return result.model_copy(update={"stdout": stdout, "stderr": stderr,
                                     "stdout_truncated": result.stdout_truncated or out_cut,
                                     "stderr_truncated": result.stderr_truncated or err_cut,
                                     "output_budget_exhausted": True})


def _message(compile_result: Optional[CommandRunResult], runs: list[Optional[CommandRunResult]],
             compile_timeout: float) -> str:
    """The response's ``message``: a sandbox error's text, or that the compile step ran out of time
    (``compile_timeout`` seconds; a compiler stopped there often prints nothing)."""
    for r in (compile_result, *runs):
        if r is not None and r.status == CommandRunStatus.Error:
            return r.stderr or "sandbox error"
    if compile_result is not None and compile_result.status == CommandRunStatus.TimeLimitExceeded:
        return (f"compile step: stopped at compile_timeout ({compile_timeout:g} s) after {compile_result.cpu_time or 0:.2f} s "
                f"of CPU in {compile_result.execution_time or 0:.2f} s of wall time, "
                f"{compile_result.cpu_wait or 0:.2f} s of it waiting for a CPU (not counted); raise compile_timeout")
    return ""


def to_command_result(res: ProcessResult) -> CommandRunResult:
    """Convert a :class:`~judgebox.sandbox.process.ProcessResult` to the wire model (UTF-8 with replacement;
    a stream cut at ``output_limit_bytes`` bytes ends at a character boundary, flagged ``*_truncated``).

    A command that could not be started is ``status=Error`` (the request becomes ``SandboxError``),
    except a program file in the working folder that could not be executed (the run made it so):
    that is ``Finished`` with return code 126 or 127 (:func:`judgebox.sandbox.process.program_exec_status`).
    """
    if res.spawn_error:
        return CommandRunResult(status=CommandRunStatus.Error, stderr=res.spawn_error, stdout="")
    return CommandRunResult(
        status=CommandRunStatus.TimeLimitExceeded if res.timed_out else CommandRunStatus.Finished,
        execution_time=round(res.wall_time, 6),
        cpu_time=round(res.cpu_time, 6),
        return_code=res.return_code,
        stdout=decode_capped(res.stdout, res.stdout_truncated),
        stderr=decode_capped(res.stderr, res.stderr_truncated),
        stdout_truncated=res.stdout_truncated,
        stderr_truncated=res.stderr_truncated,
        memory_exceeded=res.memory_exceeded,
        disk_exceeded=res.disk_exceeded,
        cpu_wait=None if res.cpu_wait is None else round(res.cpu_wait, 6),
    )
