"""What every command shares: the usage error and its exit status, checks of the paths a command
reads and writes, the flag types, and how a long job is interrupted and resumed."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Optional

USAGE_ERROR = 1
"""Exit status of a bad argument or input (argparse's own usage errors included)."""


FORCE_HELP = ("replace an existing file this run did not write (another run's summary, page or chart, or a file "
              "judgebox did not write); never an input, and never a results or trajectories file")


class UsageError(Exception):
    """A bad argument or input path; its message names the argument, the path, the reason and the fix."""


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


def ks(text: str) -> list[int]:
    """``--k``: comma-separated integers >= 1 (``1,10,100``); an empty item (``1,,2``) is refused."""
    try:
        ks = sorted({int(k) for k in text.split(",")})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: use comma-separated integers, e.g. 1,10,100") from None
    if ks[0] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: every k must be >= 1")
    return ks


def port_number(text: str) -> int:
    """``--port``: a TCP port, 0-65535 (0: one the system picks)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port number (0-65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a TCP port number (0-65535)")
    return port


def outputs(files: list[tuple[str, object, str]], owners: dict[str, str], force: bool,
             task_ids: Optional[set[str]] = None) -> None:
    """Check the run's outputs against its inputs and outputs and what each file holds
    (:func:`judgebox.outputs.check_outputs`); ``files``: ``(flag, path or None, kind)``, an input
    that is not an existing file (a dataset name, ``gold``) left out."""
    from judgebox.outputs import Role, check_outputs

    roles = [Role(flag, Path(str(path)), kind) for flag, path, kind in files
             if path and (kind != "input" or Path(str(path)).is_file())]
    check_outputs(roles, owners, force=force, task_ids=task_ids)


def html_page(out: Optional[str], records: Path, summary, tokenizer: Optional[str] = None) -> None:
    """``--html``: the report page of a finished run (the summary in memory)."""
    if out:
        from judgebox.report import write_report

        write_report(records, Path(out), summary=summary.model_dump(mode="json"), tokenizer=tokenizer)
        print(f"report: {out}")


def resumable(coro, what: str, where: Path):
    """``(summary, 0)`` of a resumable job run to its end, or ``(None, 128 + signal)`` when SIGINT or
    SIGTERM stopped it (its ``what`` so far are kept in ``where``)."""
    import asyncio

    try:
        return asyncio.run(until_terminated(coro)), 0
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        signum = signal.SIGINT if isinstance(exc, KeyboardInterrupt) else signal.SIGTERM
        print(f"\ninterrupted ({signum.name}): {what} so far are in {where}; run the same command to resume; "
              "waiting for the programs still running to end (each within its time limit)", file=sys.stderr, flush=True)
        quiet_while_waiting()
        return None, 128 + signum


def quiet_while_waiting() -> None:
    """From now until exit, another Ctrl-C or SIGTERM prints one line instead of a traceback from the
    interpreter's wait for the sandbox's worker threads (each running program ends within its limits)."""
    def note(signum: int, _frame: object) -> None:
        print(f"still waiting for the running programs to end ({signal.Signals(signum).name} again does not "
              "cut this short: they end within their time limits)", file=sys.stderr, flush=True)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, note)


def infra_exit(summary, hit: str, redo: str) -> int:
    """Exit status 2 (saying so) when some items hit infrastructure errors and are out of pass@k, else 0."""
    if summary.excluded.get("infra_error"):
        print(f"{summary.excluded['infra_error']} {hit} and are not in pass@k; re-run to {redo}")
        return 2
    return 0


def json_arg(flag: str, text: Optional[str]) -> dict:
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


def resume_notes(path: Path, outside: int, duplicates: int, what: str, whose: str, unchecked: int = 0) -> None:
    """What a resume leaves out of the run, said under its "resuming from" line: records the file
    keeps for ``whose`` (not in this summary, never deleted), older repeated lines it dropped, and
    ``unchecked`` kept records an older judgebox wrote without their tests' fingerprint."""
    if unchecked:
        print(f"  {unchecked} {what} kept from {path} were written before judgebox recorded the tests they were "
              "judged against: if the dataset's tests changed since, give a new path to judge them again")
    if outside:
        print(f"  {outside} {what} in {path} are for {whose}: kept in the file, not in this summary")
    if duplicates:
        print(f"  {duplicates} older repeated lines of a sample dropped from {path} (the newest of each is kept)")
