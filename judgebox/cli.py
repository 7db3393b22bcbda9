"""``judgebox`` console script. Each subcommand lives in the package it drives and is imported lazily.

Subcommands: ``serve`` (the sandbox HTTP server), ``eval`` (score samples of a dataset, pass@k),
``rollout`` (generate scored agent trajectories with a model: tool calls, pass@k), ``ray up/status/down``
(the sandbox fleet on a Ray cluster), ``report`` (an HTML page of a run), ``runtime`` (the libraries
programs may import), ``datasets`` (list the dataset manifests and what is available locally) and
``data convert`` (write a dataset as verl parquet rows).

Exit status: 0 done; 1 a usage or input error (one line on stderr naming the argument, the path, the
reason and the fix), or a sandbox that cannot apply the isolation it promises (see ``--isolation``);
2 ``eval`` finished but infrastructure errors remain (run it again to score those samples);
128 + the signal number (130 Ctrl-C, 143 SIGTERM) ``eval`` was interrupted, its results kept.
``rollout`` uses the same statuses.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Optional, Sequence, get_args

#: ``judgebox --help``'s text above the commands (plain text at 80 columns: the module docstring is reST)
DESCRIPTION = """\
Run untrusted, model-written code in a sandbox and turn the result into a reward
or pass@k. `judgebox COMMAND --help` describes each command."""
#: ``judgebox --help``'s text below the commands
EXIT_STATUS = """\
exit status: 0 done; 1 a usage or input error (one line on stderr naming the
argument, the path, the reason and the fix), or isolation that cannot be
applied; 2 eval or rollout finished with infrastructure errors (run it again to
redo those); 128 + the signal number (130 Ctrl-C, 143 SIGTERM) interrupted,
what was done kept (run the same command to resume)."""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("judgebox")
    except PackageNotFoundError:
        return "unknown (not installed)"


USAGE_ERROR = 1
"""Exit status of a bad argument or input (argparse's own usage errors included)."""
FORCE_HELP = ("replace an existing file this run did not write (another run's summary, page or chart, or a file "
              "judgebox did not write); never an input, and never a results or trajectories file")


class UsageError(Exception):
    """A bad argument or input path; its message names the argument, the path, the reason and the fix."""


class Parser(argparse.ArgumentParser):
    """argparse with usage errors exiting ``USAGE_ERROR`` (argparse uses 2, which ``eval`` reserves for
    "infrastructure errors remain")."""

    def error(self, message: str):
        """Print ``message`` as one line on stderr, with where the usage is, and exit ``USAGE_ERROR``
        (the whole usage of ``eval`` is 30 lines, which hid the one that names the bad flag)."""
        import re

        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if choice:  # a misspelt command: the closest names first (Python 3.14's argparse suggests; 3.10 does not)
            import difflib

            names = re.findall(r"'([^']*)'", choice[2]) or [c.strip() for c in choice[2].split(",")]
            near = difflib.get_close_matches(choice[1], names, n=1, cutoff=0.6)
            if near:
                message = f"{message}; did you mean {near[0]!r}?"
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def readable(flag: str, path: str, fix: str) -> Path:
    """``path`` given as ``flag``, checked to be a file that can be read.

    Raises:
        UsageError: it cannot be opened for reading (missing, a directory, no permission); the message
            is ``FLAG PATH: OS reason; fix``.
    """
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise UsageError(f"{flag} {path}: {exc.strerror}; {fix}") from None
    return Path(path)


def writable(flag: str, path: str, make_parent: bool = False) -> Path:
    """``path`` given as ``flag``, checked (before any work is done) to be a file that can be written.

    Args:
        make_parent: create missing parent directories first.

    Raises:
        UsageError: it cannot be opened for appending (no such directory, a directory, no permission);
            the message is ``FLAG PATH: OS reason; fix``.
    """
    out = Path(path)
    existed = out.exists()
    try:
        if make_parent:
            out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "ab"):
            pass
    except OSError as exc:
        where = "a folder you can write to (missing folders are made)" if make_parent else \
            "an existing folder you can write to"
        raise UsageError(f"{flag} {path}: {exc.strerror}; give a file path in {where}") from None
    if not existed:
        out.unlink()
    return out


async def until_terminated(coro):
    """Await ``coro``; SIGTERM cancels it the way ``asyncio.run`` cancels on Ctrl-C, so it shuts down
    cleanly (its ``finally`` blocks run) and ``asyncio.run`` raises ``CancelledError``."""
    import asyncio

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
    try:
        return await coro
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn
    from pydantic import ValidationError

    from judgebox.integrations.openrlhf.endpoint import create_router
    from judgebox.sandbox import LocalSandbox, SandboxClient
    from judgebox.sandbox.config import SandboxSettings
    from judgebox.sandbox.server.app import create_app

    try:
        settings = SandboxSettings(**{name: getattr(args, name) for name in SandboxSettings.model_fields
                                      if hasattr(args, name)})
    except ValidationError as exc:  # one line per field: the message names the flag and the fix
        raise UsageError("; ".join(f"--{'-'.join(map(str, e['loc'])).replace('_', '-')}: "
                                   f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors())) from None
    _port_free(args.host, args.port)
    app = create_app(settings)
    # OpenRLHF's remote reward (POST /get_reward) judges in this process, with the server's settings.
    app.include_router(create_router(SandboxClient("", local=LocalSandbox(settings)),
                                     concurrency=settings.max_concurrency))
    # loop/http "auto": uvloop and httptools where installed (they are dependencies), else asyncio/h11;
    # no access log below "info" (it would be formatted per request and then dropped)
    print(f"judgebox serve: http://{args.host}:{args.port} ({settings.isolation} isolation, "
          f"{settings.max_concurrency} programs at once; --log-level info logs each request; Ctrl-C stops it)",
          file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level,
                loop="auto", http="auto", access_log=args.log_level in ("trace", "debug", "info"))
    print("judgebox serve: stopped", file=sys.stderr, flush=True)
    return 0


def _port_free(host: str, port: int) -> None:
    """Raise :class:`UsageError` (exit 1, one line) when ``host:port`` cannot be bound (uvicorn logged
    the bind error and exited 3, a status this command does not document)."""
    import socket

    if port == 0:
        return
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            sock.bind(address)
    except OSError as exc:
        import errno

        if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:  # the host is the problem
            raise UsageError(f"--host {host}: cannot listen on {host}:{port} ({exc.strerror or exc}); give an "
                             "address of this machine (127.0.0.1, 0.0.0.0 for every interface)") from None
        raise UsageError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror or exc}); another server "
                         "may hold it: give another --port, or stop that server") from None


def _runtime_build(args: argparse.Namespace) -> int:
    from judgebox.sandbox.runtime import PROFILES
    from judgebox.sandbox.runtime.build import BuildError, build_runtime, select

    if args.profile not in PROFILES:
        raise UsageError(f"--profile {args.profile}: no such profile; choose among {', '.join(PROFILES)}")
    kinds = [k.strip() for k in args.languages.split(",") if k.strip()] if args.languages else None
    try:
        build_runtime(select(PROFILES[args.profile], kinds))
    except BuildError as exc:
        raise UsageError(str(exc)) from None
    return 0


def _runtime_prebuild(args: argparse.Namespace) -> int:
    import json

    from judgebox.sandbox.config import SandboxSettings
    from judgebox.sandbox.executor import Executor

    ready = Executor(SandboxSettings()).prebuild()
    print(json.dumps(ready, indent=1))
    return 0 if all(ready.values()) else 1


def _runtime_show(args: argparse.Namespace) -> int:
    import json

    from judgebox.sandbox.config import SandboxSettings

    runtime = SandboxSettings().program_runtime
    print(json.dumps(runtime.describe() if runtime else {"name": "host", "python": sys.executable}, indent=1))
    return 0


def _embedded(urls: list[str], concurrency: Optional[int]):
    """The embedded sandbox of a command that judges ``concurrency`` samples at once: that many
    programs run at once (its ``max_concurrency``; a program waits for a core, not for a slot, and
    the time limits forgive those waits), unless ``JUDGEBOX_MAX_CONCURRENCY`` says otherwise; ``None``
    when the command talks to a sandbox URL or gives no concurrency."""
    import os

    from judgebox.sandbox import LocalSandbox
    from judgebox.sandbox.client.settings import ClientSettings

    if not concurrency or urls or ClientSettings().urls() or "JUDGEBOX_MAX_CONCURRENCY" in os.environ:
        return None
    return LocalSandbox(max_concurrency=concurrency)


def checked_client(urls: list[str], manifest=None, problems=(), concurrency: Optional[int] = None):
    """The command's :class:`~judgebox.sandbox.client.client.SandboxClient` (``--sandbox-url``, else the
    environment, else embedded), its sandbox checked first (a few seconds): a command never spends
    hours turning every sample into an infrastructure error against a dead URL, nor scores a dataset
    whose harness libraries (``manifest.libraries``, what its ``prelude`` imports outside the
    standard library, and the ``libraries`` of the ``problems``' specs) the sandbox lacks.

    Raises:
        UsageError: no sandbox answers (the message names each URL and its cause), or it lacks a
            library the dataset's harness provides (naming them and the build command).
    """
    from judgebox.reward.libraries import MissingLibraries, prelude_libraries, require_libraries
    from judgebox.reward.preludes import PRELUDES
    from judgebox.sandbox import SandboxClient
    from judgebox.sandbox.errors import SandboxInfraError, SandboxRequestError, SandboxUnavailable

    try:
        client = SandboxClient(urls or None, local=_embedded(urls, concurrency))
    except SandboxRequestError as exc:  # a malformed URL, ray:// beside others, ray:// without Ray
        message = str(exc).removeprefix("endpoints: ")
        raise UsageError(message if message.startswith("JUDGEBOX_SANDBOX_URL") else f"--sandbox-url: {message}") from None
    try:
        client.check()
        libraries = [] if manifest is None else [
            *manifest.libraries, *(prelude_libraries(PRELUDES[manifest.prelude]) if manifest.prelude else ())]
        libraries += [name for p in problems if p.spec is not None for name in p.spec.libraries]
        if libraries:
            try:
                require_libraries(client, manifest.name if manifest else "the dataset",
                                  (manifest and manifest.language) or "python", sorted(set(libraries)),
                                  manifest.runtime if manifest else "default")
            except (SandboxInfraError, RuntimeError) as exc:  # the sandbox answers but cannot run the probe:
                print(f"judgebox: could not check the sandbox's libraries ({exc}); its runs will "
                      "tell", file=sys.stderr)  # every run then reports the same failure as infra_error
    except SandboxUnavailable as exc:
        client.close()
        raise UsageError(f"--sandbox-url: {exc}") from None
    except MissingLibraries as exc:
        client.close()
        needing = [p.task_id for p in problems if p.spec is not None and set(p.spec.libraries) & set(exc.missing)]
        where = (f" ({len(needing)} of the {len(problems)} problems to score need them, e.g. {needing[0]}; a samples "
                 "file without them, with --allow-partial, scores the others)") if needing else ""
        raise UsageError(f"{exc}{where}") from None
    return client


def _ray_address(flag_value: Optional[str]) -> Optional[str]:
    """``--address`` as ``HOST:PORT`` (a ``ray://HOST:PORT`` form is accepted); ``None``: this
    process's cluster, else ``RAY_ADDRESS``, else ``auto``."""
    if not flag_value:
        return None
    from judgebox.sandbox.ray.cluster import is_ray_url, parse_ray_url

    return parse_ray_url(flag_value) if is_ray_url(flag_value) else flag_value


def _ray_call(fn, *args):
    """``fn(*args)`` with no cluster or no pool turned into a :class:`UsageError` (its message says how to
    start one)."""
    from judgebox.sandbox.errors import SandboxUnavailable

    try:
        return fn(*args)
    except SandboxUnavailable as exc:
        raise UsageError(str(exc)) from None


def _ray_up(args: argparse.Namespace) -> int:
    from judgebox.sandbox.ray import Pool, PoolConfig
    from judgebox.sandbox.ray.cluster import connect
    from judgebox.sandbox.ray.pool import check_nodes

    settings = {"isolation": args.isolation} if args.isolation else {}
    try:  # bad flags are refused before any cluster is reached
        config = PoolConfig(cpus_per_executor=args.cpus_per_executor, per_node=args.per_node,
                            min_executors=args.min_executors, settings=settings, resource=args.resource)
    except ValueError as exc:
        raise UsageError(f"judgebox ray up: {exc}") from None
    ray = _ray_call(connect, _ray_address(args.address))
    languages = [k.strip() for k in args.languages.split(",") if k.strip()]
    try:
        reports = check_nodes(ray, settings, languages, args.resource)
    except RuntimeError as exc:
        raise UsageError(str(exc)) from None
    pool = Pool.up(None, config)
    try:
        pool.wait(1, timeout=args.wait)
    except TimeoutError as exc:
        raise UsageError(f"judgebox ray up: {exc}; `judgebox ray status` shows each executor") from None
    print(f"judgebox pool up on {ray.get_runtime_context().gcs_address}: {len(reports)} node(s) checked "
          f"({', '.join(languages)} there); sandbox URL: ray://{ray.get_runtime_context().gcs_address}")
    _print_pool(pool.stats())
    return 0


def _print_pool(stats: dict) -> None:
    print(f"{'executor':<28} {'node':<16} {'slots':>5} {'running':>7} {'queued':>6} {'runs':>6} "
          f"{'failures':>8} {'restarts':>8}  state")
    for e in stats["executors"]:
        state = "live" if e["live"] else (e["error"] or "pending")
        print(f"{e['name']:<28} {(e['node_id'] or '-')[:16]:<16} {e['slots']:>5} {e['running']:>7} "
              f"{e['waiting']:>6} {e['runs']:>6} {e['failures']:>8} {e['restarts']:>8}  {state}")
    print(f"nodes {len(stats['nodes'])}, executors {len(stats['executors'])} ({stats['pending']} not live), "
          f"slots {stats['slots']}, running {stats['running']}, queued {stats['waiting']}, runs {stats['runs']}, "
          f"retried elsewhere {stats['retries']}, dropped with their node {stats['dropped']}")


def _ray_status(args: argparse.Namespace) -> int:
    import json

    from judgebox.sandbox.ray import Pool

    stats = _ray_call(Pool.find, _ray_address(args.address)).stats()
    if args.json:
        print(json.dumps(stats, indent=1))
    else:
        _print_pool(stats)
    return 0


def _ray_down(args: argparse.Namespace) -> int:
    from judgebox.sandbox.ray import Pool

    n = _ray_call(Pool.find, _ray_address(args.address)).down()
    print(f"judgebox pool stopped: {n} executor(s)")
    return 0


def settings_flags(group, model) -> None:
    """Add one ``--field-name`` option per field of the pydantic settings ``model`` to the argparse
    ``group``: the settings model is the one source of truth for ``judgebox serve``'s flags, the
    environment variables and the settings reference. A flag not given is absent from the parsed
    namespace (the environment or the field's default then applies); booleans take ``--x``/``--no-x``,
    ``Literal`` fields their choices."""
    import typing

    prefix = model.model_config.get("env_prefix", "")
    for name, field in model.model_fields.items():
        kind = field.annotation
        if typing.get_origin(kind) is typing.Union:  # Optional[X]
            kind = next(a for a in typing.get_args(kind) if a is not type(None))
        kw: dict = {"default": argparse.SUPPRESS, "dest": name}
        if kind is bool:
            kw["action"] = argparse.BooleanOptionalAction
        elif typing.get_origin(kind) is typing.Literal:
            kw["choices"] = typing.get_args(kind)
        else:
            kw["type"] = kind
            kw["metavar"] = {int: "N", float: "X", str: "S"}.get(kind, "V")
        default = "computed" if field.default_factory is not None else field.default
        says = "default" in (field.description or "")  # its own words on the default: not a second one
        shown = "" if says or default is None else f"default: {default}; "
        kw["help"] = f"{field.description} ({shown}{prefix}{name.upper()})"
        group.add_argument(f"--{name.replace('_', '-')}", **kw)


def _ks(text: str) -> list[int]:
    """``--k``: comma-separated integers >= 1 (``1,10,100``); an empty item (``1,,2``) is refused."""
    try:
        ks = sorted({int(k) for k in text.split(",")})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: use comma-separated integers, e.g. 1,10,100") from None
    if ks[0] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: every k must be >= 1")
    return ks


def _port(text: str) -> int:
    """``--port``: a TCP port, 0-65535 (0: one the system picks)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port number (0-65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a TCP port number (0-65535)")
    return port


def _eval(args: argparse.Namespace) -> int:
    import os

    from judgebox.reward.evaluate import (
        Evaluation,
        check_run_options,
        check_sanitizable,
        dataset_samples,
        read_samples,
        unattempted,
    )
    from judgebox.reward.loaders import load_dataset
    from judgebox.reward.report import print_table, write_chart, write_summary

    problems, manifest = load_dataset(args.dataset, args.format)
    name = manifest.name if manifest else Path(args.dataset).name.split(".")[0]
    if args.samples in ("gold",) or args.samples.startswith("column:"):
        samples = dataset_samples(problems, args.samples)
        tag = args.samples.replace("column:", "")
    else:
        path = readable("--samples", args.samples,
                        "give a jsonl/json/parquet samples file, 'gold' or 'column:NAME'")
        samples = read_samples(path, problems)
        tag = path.name.split(".")[0]
        missing = unattempted(problems, samples)
        if missing and not args.allow_partial:
            raise UsageError(f"--samples {args.samples}: {len(missing)} of {len(problems)} problems have no sample "
                             f"(e.g. {missing[0]!r}); pass --allow-partial to score the whole benchmark with those "
                             "problems counted as unsolved (pass@k over all problems, unattempted = 0)")
    results = writable("--results", args.results or f"judgebox-results/{name}-{tag}.results.jsonl",
                       make_parent=True)
    for flag, out in (("--summary", args.summary), ("--chart", args.chart), ("--html", args.html)):
        if out:
            writable(flag, out)
    if args.chart:
        from judgebox.extras import require

        if Path(args.chart).suffix.lower() != ".png":  # it wrote PNG bytes into c.pdf
            raise UsageError(f"--chart {args.chart}: the chart is a PNG image; give a path ending in .png")
        require("matplotlib")  # before the scoring, not after it
    run = str(results.resolve())
    _outputs([("DATASET", args.dataset, "input"), ("--samples", args.samples, "input"),
              ("--results", results, "results"), ("--summary", args.summary, "summary"),
              ("--chart", args.chart, "chart"), ("--html", args.html, "page")],
             {"summary": run, "chart": run, "page": run}, args.force, {p.task_id for p in problems})
    sanitize = args.sanitize if args.sanitize is not None else bool(manifest and manifest.sanitize)
    if sanitize:
        check_sanitizable(problems)
    attempted = {s.task_id for s in samples}
    concurrency = 2 * (os.cpu_count() or 1) if args.concurrency is None else args.concurrency
    check_run_options(concurrency, args.retries)  # before the embedded sandbox's settings take it
    client = checked_client(args.sandbox_url, manifest, [p for p in problems if p.task_id in attempted], concurrency)
    evaluation = Evaluation(problems, results, client=client, concurrency=concurrency,
                            retries=args.retries, stop_on_first_failure=args.stop_on_first_failure,
                            dataset=name, sanitize=sanitize, on_tamper=args.on_tamper)
    def announce(done: dict, pending: list) -> None:
        if done:
            redo = sum(1 for s in pending if s.key in done)
            print(f"resuming from {results}: keeping {len(samples) - len(pending)} of {len(samples)} results; "
                  f"re-scoring {redo} infrastructure errors; scoring {len(pending) - redo} new samples")
            resume_notes(results, len(set(done) - {s.key for s in samples}), evaluation.duplicates_dropped,
                         "results", "samples not in this run")

    summary, code = _resumable(evaluation.run(samples, args.k, progress=not args.no_progress, announce=announce),
                               "results", results)
    if summary is None:
        return code
    print_table(summary)
    print(f"results: {results}")
    summary.results_file = run
    if args.summary:
        write_summary(summary, Path(args.summary))
        print(f"summary: {args.summary}")
    if args.chart:
        write_chart(summary, Path(args.chart))
        print(f"chart: {args.chart}")
    _html(args.html, results, summary)
    if evaluation.gave_up:
        print(f"judgebox eval: {evaluation.gave_up}; {summary.n_samples_pending} samples were not scored; results so far "
              f"are in {results}: run the same command to resume", file=sys.stderr)
        return 2
    return _infra_exit(summary, "samples hit infrastructure errors after retries", "score them")


def _outputs(files: list[tuple[str, object, str]], owners: dict[str, str], force: bool,
             task_ids: Optional[set[str]] = None) -> None:
    """Check the run's outputs against its inputs and outputs and what each file holds
    (:func:`judgebox.outputs.check_outputs`); ``files``: ``(flag, path or None, kind)``, an input
    that is not an existing file (a dataset name, ``gold``) left out."""
    from judgebox.outputs import Role, check_outputs

    roles = [Role(flag, Path(str(path)), kind) for flag, path, kind in files
             if path and (kind != "input" or Path(str(path)).is_file())]
    check_outputs(roles, owners, force=force, task_ids=task_ids)


def _html(out: Optional[str], records: Path, summary, tokenizer: Optional[str] = None) -> None:
    """``--html``: the report page of a finished run (the summary in memory)."""
    if out:
        from judgebox.report import write_report

        write_report(records, Path(out), summary=summary.model_dump(mode="json"), tokenizer=tokenizer)
        print(f"report: {out}")


def _report(args: argparse.Namespace) -> int:
    from judgebox.report import write_report

    source = readable("FILE", args.file, "give the results jsonl of `judgebox eval`, the trajectories jsonl of "
                                         "`judgebox rollout` or a verl rollout dump")
    summary = readable("--summary", args.summary, "give the summary JSON written with this file") \
        if args.summary else None
    other = readable("--compare", args.compare, "give another results or trajectories jsonl") if args.compare else None
    from judgebox.outputs import identify

    if identify(source).kind == "page":  # the default --out would be the page itself
        raise UsageError(f"FILE {source}: it is a report page; give the results jsonl of `judgebox eval`, the "
                         "trajectories jsonl of `judgebox rollout` or the verl dump it was made from")
    out = writable("--out", args.out or str(source.with_suffix(".html")), make_parent=True)
    _outputs([("FILE", source, "input"), ("--summary", summary, "input"), ("--compare", other, "input"),
              ("--out", out, "page")],  # the default (FILE with .html) is named as --out: give --out to change it
             {"page": str(source.resolve())}, args.force)
    write_report(source, out, summary_path=summary, compare_path=other,
                 tokenizer=None if args.no_tokens else (args.tokenizer or None), title=args.title,
                 token_view=not args.no_tokens)
    print(f"report: {out}")
    return 0


def _resumable(coro, what: str, where: Path):
    """``(summary, 0)`` of a resumable job run to its end, or ``(None, 128 + signal)`` when SIGINT or
    SIGTERM stopped it (its ``what`` so far are kept in ``where``)."""
    import asyncio

    try:
        return asyncio.run(until_terminated(coro)), 0
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        signum = signal.SIGINT if isinstance(exc, KeyboardInterrupt) else signal.SIGTERM
        print(f"\ninterrupted ({signum.name}): {what} so far are in {where}; run the same command to resume; "
              "waiting for the programs still running to end (each within its time limit)", file=sys.stderr, flush=True)
        _quiet_while_waiting()
        return None, 128 + signum


def _quiet_while_waiting() -> None:
    """From now until exit, another Ctrl-C or SIGTERM prints one line instead of a traceback from the
    interpreter's wait for the sandbox's worker threads (each running program ends within its limits)."""
    def note(signum: int, _frame: object) -> None:
        print(f"still waiting for the running programs to end ({signal.Signals(signum).name} again does not "
              "cut this short: they end within their time limits)", file=sys.stderr, flush=True)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, note)


def _infra_exit(summary, hit: str, redo: str) -> int:
    """Exit status 2 (saying so) when some items hit infrastructure errors and are out of pass@k, else 0."""
    if summary.excluded.get("infra_error"):
        print(f"{summary.excluded['infra_error']} {hit} and are not in pass@k; re-run to {redo}")
        return 2
    return 0


def _json_arg(flag: str, text: Optional[str]) -> dict:
    import json

    if not text:
        return {}
    try:
        value = json.loads(Path(text[1:]).read_text() if text.startswith("@") else text)
    except (ValueError, OSError) as exc:
        raise UsageError(f"{flag} {text!r}: not a JSON object ({exc}); e.g. '{{\"temperature\": 0.6}}' or @file.json")
    if not isinstance(value, dict):
        raise UsageError(f"{flag} {text!r}: must be a JSON object")
    return value


def _rollout(args: argparse.Namespace) -> int:

    from pydantic import ValidationError

    from judgebox.agent.rollout import Rollout
    from judgebox.reward.evaluate import Evaluation
    from judgebox.reward.loaders import load_dataset
    from judgebox.reward.report import print_table, write_summary

    sampling = _json_arg("--sampling-params", args.sampling_params)
    settings = _json_arg("--config", args.config)
    if args.tools == "none":
        settings.setdefault("max_assistant_turns", 1)
        tools = []
    else:
        from judgebox.agent.tools import load_tools

        tools = load_tools(readable("--tools", args.tools, "give a tool config YAML (verl format) or 'none'"))
    if args.max_model_len is not None:
        settings.setdefault("max_model_len", args.max_model_len)
    try:
        from judgebox.agent.config import AgentLoopConfig

        config = AgentLoopConfig(**settings)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "config"
        raise UsageError(f"--config: {where}: {error['msg']} (see agent.AgentLoopConfig)") from None
    problems, manifest = load_dataset(args.dataset, args.format)
    name = manifest.name if manifest else Path(args.dataset).name.split(".")[0]
    out = writable("--out", args.out or f"judgebox-results/{name}.rollout.jsonl", make_parent=True)
    for flag, path in (("--summary", args.summary), ("--html", args.html)):
        if path:
            writable(flag, path)
    source = str(out.resolve())
    _outputs([("DATASET", args.dataset, "input"), ("--tools", None if args.tools == "none" else args.tools, "input"),
              *((flag, value[1:], "input") for flag, value in (("--sampling-params", args.sampling_params),
                                                               ("--config", args.config)) if (value or "").startswith("@")),
              ("--out", out, "trajectories"), ("--summary", args.summary, "summary"), ("--html", args.html, "page")],
             {"summary": source, "page": source}, args.force, {p.task_id for p in problems})
    if args.backend == "openai" and not args.base_url:
        raise UsageError("--backend openai needs --base-url URL (repeatable)")
    for flag, value in (("--model", args.model), ("--tokenizer", args.tokenizer)):
        # a path (not a hub id "name" or "org/name") must be a directory here; transformers would
        # read it as a hub id and answer "Repo id must be in the form 'repo_name' or ..."
        if value and (value.startswith(("/", ".", "~")) or value.count("/") > 1) \
                and not Path(value).expanduser().is_dir():
            raise UsageError(f"{flag} {value}: no such directory; give a model directory (config.json and "
                             "tokenizer files) or a hub id such as Qwen/Qwen3-0.6B")

    import importlib.util

    from transformers import AutoTokenizer  # first: a missing agent extra is named before the engine

    from judgebox.agent.loop import ToolAgentLoop
    from judgebox.extras import install_line

    for module in {"vllm": ("vllm", "torch"), "hf": ("torch",)}.get(args.backend, ()):
        if importlib.util.find_spec(module) is None:  # before any trajectory, not an infra_error each
            raise UsageError(f"--backend {args.backend}: {install_line(module)}")

    client = checked_client(args.sandbox_url, manifest, problems)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer or args.model)

    async def run():
        backend = _LazyBackend(lambda: _backend(args, config))
        try:
            loop = ToolAgentLoop(config, tokenizer, backend, tools=tools)
            evaluation = Evaluation(problems, out, client=client,
                                    retries=args.retries, dataset=name)
            # named by their flags: a resume with other settings names the ones that differ; not --backend
            # (the same model served by another engine, a vLLM server for the embedded one, goes on the run)
            generated_by = {"--model": args.model, "--sampling-params": sampling, "--system": args.system,
                            "--tools": None if args.tools == "none" else Path(args.tools).read_text(),
                            "--config": config.model_dump(mode="json")}
            rollout = Rollout(problems, loop, out, n=args.n, sampling_params=sampling, evaluation=evaluation,
                              concurrency=args.concurrency, system=args.system, dataset=name, settings=generated_by)
            def announce(done: dict, pending: list) -> None:
                if done:
                    print(f"resuming from {out}: keeping {len(rollout.keys()) - len(pending)} of "
                          f"{len(rollout.keys())} trajectories; running {len(pending)}")
                    resume_notes(out, len(set(done) - set(rollout.keys())), rollout.duplicates_dropped,
                                 "trajectories", f"problems not in this run or samples beyond --n {args.n}")

            summary = await rollout.run(args.k, progress=not args.no_progress, announce=announce)
            gave_up.append(rollout.gave_up)
            return summary
        finally:
            await backend.close()

    gave_up: list[str] = []
    summary, code = _resumable(run(), "trajectories", out)
    if summary is None:
        return code
    print_table(summary, command="rollout")
    print(f"stop reasons: {summary.stop_reasons}; tool calls per trajectory: "
          f"{summary.tool_calls_per_trajectory:.2f}; parse errors: {summary.parse_errors}; "
          f"tool errors: {summary.tool_errors}; tool timeouts: {summary.tool_timeouts}")
    print(f"trajectories: {out}")
    summary.model = args.model
    summary.results_file = source
    if args.summary:
        write_summary(summary, Path(args.summary))
        print(f"summary: {args.summary}")
    _html(args.html, out, summary, tokenizer=args.tokenizer or args.model)
    if gave_up and gave_up[0]:
        print(f"judgebox rollout: {gave_up[0]}; {summary.n_samples_pending} trajectories were not run; those so far "
              f"are in {out}: run the same command to resume", file=sys.stderr)
        return 2
    return _infra_exit(summary, "trajectories hit infrastructure errors (aborted generation or sandbox)", "redo them")


class _LazyBackend:
    """A backend started on its first request, so that re-running a finished rollout starts no engine
    (vLLM's took minutes to say "running 0")."""

    def __init__(self, make) -> None:
        import asyncio

        self.make, self.backend, self.lock = make, None, asyncio.Lock()

    async def started(self):
        async with self.lock:
            if self.backend is None:
                self.backend = self.make()
        return self.backend

    async def engine_info(self):
        backend = await self.started()
        probe = getattr(backend, "engine_info", None)
        return await probe() if probe is not None else None

    async def generate(self, prompt_ids, sampling_params, request_id=None):
        return await (await self.started()).generate(prompt_ids, sampling_params, request_id)

    async def close(self) -> None:
        if hasattr(self.backend, "shutdown"):
            self.backend.shutdown()
        elif hasattr(self.backend, "aclose"):
            await self.backend.aclose()


def resume_notes(path: Path, outside: int, duplicates: int, what: str, whose: str) -> None:
    """What a resume leaves out of the run, said under its "resuming from" line: records the file
    keeps for ``whose`` (not in this summary, never deleted) and older repeated lines it dropped."""
    if outside:
        print(f"  {outside} {what} in {path} are for {whose}: kept in the file, not in this summary")
    if duplicates:
        print(f"  {duplicates} older repeated lines of a sample dropped from {path} (the newest of each is kept)")


def _backend(args: argparse.Namespace, config):
    """The generation backend named by ``--backend``."""
    if args.backend == "vllm":
        import os
        import warnings

        # vLLM's start-up lines only on request (each variable is read at import, by the engine's
        # processes too, and a value the user set is kept): its INFO lines (~60 per start) and, on CPU,
        # its warning that Triton has no CPU backend (VLLM_LOGGING_LEVEL=WARNING or INFO shows them),
        # torch's C++ NUMA-binding notice (TORCH_CPP_LOG_LEVEL) and torch's FutureWarnings raised
        # inside vLLM (PYTHONWARNINGS); none says anything a rollout's user can act on
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
        os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
        if "PYTHONWARNINGS" not in os.environ:
            os.environ["PYTHONWARNINGS"] = "ignore::FutureWarning"
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"vllm\.")
        from judgebox.agent.backends import VLLMBackend

        kwargs = {"max_model_len": config.max_model_len} if config.max_model_len else {}
        if args.no_progress:  # its checkpoint-loading bar too
            kwargs["use_tqdm_on_load"] = False
        return VLLMBackend.from_model(args.model, **{**kwargs, **_json_arg("--engine-args", args.engine_args)})
    if args.backend == "openai":
        from judgebox.agent.backends import OpenAIBackend

        return OpenAIBackend(args.base_url, args.served_model_name or args.model, logprobs_mode=args.logprobs_mode)
    from judgebox.agent.backends import HFBackend

    return HFBackend.from_model(args.model, max_model_len=config.max_model_len)


def _datasets(args: argparse.Namespace) -> int:
    """``judgebox datasets``: a table that fits 80 columns (name, language, --samples, found or
    missing); ``judgebox datasets NAME``: where it is looked for and how to get it; ``--long``: that
    block for every dataset."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from judgebox.reward.loaders import list_manifests
    from judgebox.reward.loaders.hub import hub_library
    from judgebox.reward.loaders.manifest import get_manifest

    reader = "is read when there is network" if hub_library() else \
        "can be read with the datasets library (pip install \"judgebox[hub]\") when there is network"

    def how(m) -> str:
        source = m.how_to_get
        return f"the hub's {m.hub} {reader}; or {source[:1].lower()}{source[1:]}" if m.hub else source

    def samples(m) -> str:
        return "gold" if m.has_gold else ", ".join(f"column:{c}" for c in m.sample_columns) or "-"

    console = Console()
    width = max(40, min(console.width, 100))  # wrapped here, each line indented under its label

    def describe(m) -> None:
        import textwrap

        found = m.locate()
        print(textwrap.fill(f"{m.name}: {m.description}", width, subsequent_indent="    "))
        for label, value in (("format", m.format), ("language", m.language or "(per row)"), ("--samples", samples(m)),
                             ("looked for", ", ".join(m.files) + " under $JUDGEBOX_DATA_DIR, ./data, "
                                                                 "~/.cache/judgebox/data"),
                             ("found", str(found) if found else "no: " + how(m))):
            print(textwrap.fill(f"{label}: {value}", width, initial_indent="  ", subsequent_indent="      ",
                                break_long_words=False, break_on_hyphens=False))

    if args.name:
        describe(get_manifest(args.name))
        return 0
    manifests = list_manifests()
    if args.long:  # one block per dataset: a wide table squeezed into 80 columns reads one word a line
        for i, m in enumerate(manifests):
            print() if i else None
            describe(m)
        return 0
    table = Table(title="judgebox datasets", show_lines=False)
    for column in ("name", "language", "--samples", "here"):
        table.add_column(column, overflow="fold")
    missing = 0
    for m in manifests:
        found = m.locate()
        missing += found is None
        table.add_row(m.name, m.language or "(per row)", escape(samples(m)),
                      "[green]found[/green]" if found else "[yellow]missing[/yellow]")
    console.print(table)
    print(f"{len(manifests)} datasets, {missing} missing here. `judgebox datasets NAME` says where one is\n"
          "looked for and how to get it; --long shows every one's details.")
    return 0


def _convert(args: argparse.Namespace) -> int:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from judgebox.reward.loaders import load_dataset
    from judgebox.reward.loaders.verl import to_row
    from judgebox.reward.results import replace_atomically

    problems, manifest = load_dataset(args.dataset, args.format)
    name = manifest.name if manifest else Path(args.dataset).name.split(".")[0]
    out = writable("--out", args.out or f"{name}.verl.parquet")
    _outputs([("DATASET", args.dataset, "input"), ("--out", out, "parquet")], {"parquet": name}, args.force)
    usable = [p for p in problems if p.spec is not None]
    tools = [t for t in args.tool_selection.split(",") if t] if args.tool_selection is not None else None
    rows = [to_row(p, i, agent_name=args.agent_name, tool_selection=tools, system=args.system)
            for i, p in enumerate(usable)]
    table = pa.Table.from_pylist(rows)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"judgebox": json.dumps({"dataset": name})})
    replace_atomically(out, lambda tmp: pq.write_table(table, tmp))
    skipped = len(problems) - len(usable)
    print(f"wrote {len(rows)} rows to {out}" + (f" ({skipped} problems with unusable tests skipped)" if skipped else ""))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = Parser(prog="judgebox", description=DESCRIPTION, epilog=EXIT_STATUS,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"judgebox {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = sub.add_parser("serve", help="run the SandboxFusion-compatible HTTP server (+ OpenRLHF's /get_reward)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0: "
                       "every interface)")
    serve.add_argument("--port", type=_port, default=8080, help="TCP port, 0-65535 (default 8080)")
    serve.add_argument("--log-level", default="warning", help="uvicorn's log level (default warning)")
    from judgebox.sandbox.config import SandboxSettings

    settings_flags(serve.add_argument_group("sandbox settings (each also JUDGEBOX_<NAME>; a flag wins)"),
                   SandboxSettings)
    serve.set_defaults(func=_serve)

    ev = sub.add_parser("eval", help="score samples of a dataset in the sandbox and report pass@k")
    ev.add_argument("dataset", help="a dataset name (see `judgebox datasets`) or a data file path")
    ev.add_argument("--format", help="loader format for a data file path (e.g. humaneval, mbpp, apps)")
    ev.add_argument("--samples", required=True,
                    help="jsonl of task_id + completion, or 'gold' (reference solutions), or 'column:NAME'")
    ev.add_argument("--results", help="results jsonl, appended and resumed "
                                      "(default: judgebox-results/DATASET-SAMPLES.results.jsonl)")
    ev.add_argument("--summary", help="write the summary JSON here")
    ev.add_argument("--chart", help="write a PNG chart of pass@k and verdict counts here")
    ev.add_argument("--html", help="write the report page here (as `judgebox report`)")
    ev.add_argument("--force", action="store_true", help=FORCE_HELP)
    ev.add_argument("--sandbox-url", action="append", default=[],
                    help="sandbox base URL (repeatable); default: the embedded sandbox")
    ev.add_argument("--concurrency", type=int, help="samples judged at once (default: 2 x CPU count); "
                    "embedded, also the programs run at once (JUDGEBOX_MAX_CONCURRENCY overrides)")
    ev.add_argument("--k", type=_ks, default=[1, 10, 100], help="pass@k budgets (default 1,10,100)")
    ev.add_argument("--retries", type=int, default=2, help="extra attempts on infrastructure errors")
    ev.add_argument("--stop-on-first-failure", action="store_true",
                    help="stop a sample's tests at its first failure (faster, less per-test detail)")
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")
    ev.add_argument("--sanitize", action=argparse.BooleanOptionalAction, default=None,
                    help="evalplus-style sanitizing of Python function completions (default: the manifest's)")
    ev.add_argument("--allow-partial", action="store_true",
                    help="accept a samples file that leaves problems out (they count 0 in pass@k)")
    ev.add_argument("--on-tamper", choices=("report", "reject"), default=None,
                    help="report (default): tamper signals are counted beside the verdicts; reject: a sample "
                         "whose code raises any is judged wrong_answer without running")
    ev.set_defaults(func=_eval)

    ro = sub.add_parser("rollout", help="generate scored agent trajectories (tool calls, pass@k) with a model")
    ro.add_argument("dataset", help="a dataset name (see `judgebox datasets`) or a data file path")
    ro.add_argument("--format", help="loader format for a data file path (e.g. humaneval, mbpp, apps)")
    ro.add_argument("--model", required=True, help="model directory or name (its tokenizer renders prompts)")
    ro.add_argument("--tokenizer", help="tokenizer directory (default: --model)")
    ro.add_argument("--backend", choices=["vllm", "openai", "hf"], default="vllm",
                    help="vllm: AsyncLLM in this process (default); openai: servers at --base-url; hf: transformers")
    ro.add_argument("--base-url", action="append", default=[],
                    help="OpenAI-compatible server root (repeatable; trajectories stick to one)")
    from judgebox.agent.backends.base import LogprobsMode

    ro.add_argument("--logprobs-mode", choices=get_args(LogprobsMode),
                    help="--backend openai: the servers' vLLM --logprobs-mode (the API does not report it); "
                         "recorded on every trajectory (default: unknown)")
    ro.add_argument("--served-model-name", help="the model name the servers expect (default: --model)")
    ro.add_argument("--n", type=int, default=1, help="trajectories per problem (default 1)")
    ro.add_argument("--tools", default="none",
                    help="tool config YAML (e.g. configs/tools/code_interpreter.yaml) or 'none' (plain sampling)")
    ro.add_argument("--sampling-params", help="JSON object (or @file) of sampling parameters, "
                                              "e.g. '{\"temperature\": 0.6, \"top_p\": 0.95, \"seed\": 0}'")
    ro.add_argument("--config", help="JSON object (or @file) of AgentLoopConfig keys, e.g. "
                                     "'{\"max_tool_rounds\": 4, \"max_tokens_per_turn\": 1024}'")
    ro.add_argument("--max-model-len", type=int, help="the engine's context in tokens (AgentLoopConfig.max_model_len)")
    ro.add_argument("--engine-args", help="JSON object of extra vllm.AsyncEngineArgs (vllm backend)")
    ro.add_argument("--system", help="a system message put before each prompt")
    ro.add_argument("--out", help="trajectories jsonl, appended and resumed "
                                  "(default: judgebox-results/DATASET.rollout.jsonl)")
    ro.add_argument("--summary", help="write the summary JSON here")
    ro.add_argument("--force", action="store_true", help=FORCE_HELP)
    ro.add_argument("--html", help="write the report page here (as `judgebox report`, token texts from "
                                   "--tokenizer/--model)")
    ro.add_argument("--sandbox-url", action="append", default=[],
                    help="sandbox base URL for judging (repeatable); default: the embedded sandbox")
    ro.add_argument("--concurrency", type=int, default=64, help="trajectories in flight (default 64)")
    ro.add_argument("--k", type=_ks, default=[1], help="pass@k budgets (default 1)")
    ro.add_argument("--retries", type=int, default=2, help="extra judging attempts on infrastructure errors")
    ro.add_argument("--no-progress", action="store_true", help="no progress bar")
    ro.set_defaults(func=_rollout)

    rp = sub.add_parser("report", help="write one self-contained HTML page for an eval or a rollout")
    rp.add_argument("file", metavar="FILE", help="results jsonl (judgebox eval), trajectories jsonl (judgebox rollout) "
                                                 "or a verl rollout dump (trainer.rollout_data_dir)")
    rp.add_argument("--summary", help="the summary JSON written with FILE (checked against it; default: "
                                      "computed from FILE)")
    rp.add_argument("--compare", help="another results or trajectories jsonl: per-problem differences, "
                                      "regressions first")
    rp.add_argument("--tokenizer", help="model directory or hub id whose tokenizer gives the trajectory view's "
                                        "token texts (default: the model the summary names)")
    rp.add_argument("--no-tokens", action="store_true", help="leave the token view out (no tokenizer loaded)")
    rp.add_argument("--title", help="the page title (default: the dataset and file name)")
    rp.add_argument("--out", help="the HTML file (default: FILE with .html)")
    rp.add_argument("--force", action="store_true", help=FORCE_HELP)
    rp.set_defaults(func=_report)

    ds = sub.add_parser("datasets", help="list dataset manifests and which are available locally")
    ds.add_argument("name", nargs="?", metavar="NAME", help="one dataset: where it is looked for and how to get it")
    ds.add_argument("--long", action="store_true", help="every dataset's format, files and how to get it, "
                                                        "a block each")
    ds.set_defaults(func=_datasets)

    rt = sub.add_parser("runtime", help="program runtimes: the libraries programs may import")
    rt_sub = rt.add_subparsers(dest="runtime_command", metavar="COMMAND", required=True)
    build = rt_sub.add_parser("build", help="build a runtime profile (outside the server's environment)")
    build.add_argument("--profile", default="default", help="the profile to build (default: default)")
    build.add_argument("--languages", help="comma-separated package kinds to build: python, node, debian "
                                           "(default: all of the profile's)")
    build.set_defaults(func=_runtime_build)
    pre = rt_sub.add_parser("prebuild", help="build the compile speed-ups now (precompiled bits/stdc++.h, javac's "
                                             "archive, Go's standard library) in the sandbox's workdir root")
    pre.set_defaults(func=_runtime_prebuild)
    show = rt_sub.add_parser("show", help="print the runtime programs use here (JSON)")
    show.set_defaults(func=_runtime_show)

    ray = sub.add_parser("ray", help="the sandbox fleet on a Ray cluster (ray:// sandbox URLs; the ray extra)")
    ray_sub = ray.add_subparsers(dest="ray_command", metavar="COMMAND", required=True)
    address = {"help": "the cluster's address HOST:PORT, as `ray start --head` prints it (default: RAY_ADDRESS, "
                       "else the cluster started on this machine)"}
    up = ray_sub.add_parser("up", help="check every node, then start the pool: executors on every node, "
                                       "found by name (idempotent)")
    up.add_argument("--address", **address)
    up.add_argument("--cpus-per-executor", type=int, metavar="N",
                    help="CPUs each executor reserves and runs programs on at once (default: all of its node's)")
    up.add_argument("--per-node", type=int, default=1, metavar="K", help="executors on each node (default 1)")
    up.add_argument("--min-executors", type=int, default=0, metavar="N",
                    help="executors wanted in all; those the nodes cannot hold wait as pending demand for "
                         "Ray's autoscaler (default 0)")
    up.add_argument("--resource", metavar="NAME",
                    help="a Ray custom resource: executors only on the nodes that advertise it, one unit each "
                         "(e.g. judgebox_executor; default: every node)")
    up.add_argument("--isolation", choices=get_args(SandboxSettings.model_fields["isolation"].annotation),
                    help="full (the default: root and CAP_SYS_ADMIN on every node, or refuse) or minimal")
    up.add_argument("--languages", default="python",
                    help="comma-separated languages every node must have a toolchain for (default: python)")
    up.add_argument("--wait", type=float, default=300.0, help="seconds to wait for a first live executor")
    up.set_defaults(func=_ray_up)
    st = ray_sub.add_parser("status", help="executors per node, in flight, queued, runs, failures, restarts")
    st.add_argument("--address", **address)
    st.add_argument("--json", action="store_true", help="print pool.stats() as JSON")
    st.set_defaults(func=_ray_status)
    down = ray_sub.add_parser("down", help="stop every executor (their sessions close) and the pool")
    down.add_argument("--address", **address)
    down.set_defaults(func=_ray_down)

    data = sub.add_parser("data", help="dataset utilities")
    data_sub = data.add_subparsers(dest="data_command", metavar="COMMAND", required=True)
    conv = data_sub.add_parser("convert", help="write a dataset as GRPO-ready verl parquet rows")
    conv.add_argument("dataset", help="a dataset name or a data file path")
    conv.add_argument("--to", choices=["verl-parquet"], required=True, help="output format")
    conv.add_argument("--format", help="loader format for a data file path")
    conv.add_argument("--out", help="output path (default: DATASET.verl.parquet)")
    conv.add_argument("--force", action="store_true", help=FORCE_HELP)
    conv.add_argument("--agent-name", help="verl agent loop name, written as the agent_name column")
    conv.add_argument("--tool-selection", help="comma-separated tool names -> extra_info.tool_selection")
    conv.add_argument("--system", help="a system message put before each prompt")
    conv.set_defaults(func=_convert)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``judgebox`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from judgebox.extras import missing_extra
    from judgebox.sandbox.isolation.unit import IsolationUnavailable

    # the whole command errors are prefixed with: "data convert", not "data"
    command = " ".join(filter(None, (args.command, getattr(args, f"{args.command}_command", None))))
    try:
        return args.func(args)
    except ModuleNotFoundError as exc:  # a module an extra brings: one line naming the extra
        line = missing_extra(exc)
        if line is None:
            raise
        parser.exit(USAGE_ERROR, f"judgebox {command}: {line}\n")
    except (UsageError, OSError, KeyError, ValueError, IsolationUnavailable) as exc:
        if isinstance(exc, OSError) and exc.strerror:  # an OS error with no message of ours
            message = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
        else:
            message = exc.args[0] if exc.args else str(exc)
        parser.exit(USAGE_ERROR, f"judgebox {command}: {message}\n")


if __name__ == "__main__":
    sys.exit(main())
