"""The sandbox a judging command talks to: ``--sandbox-url``, else the environment, else embedded,
checked before any work."""

from __future__ import annotations

import sys
from typing import Optional

from judgebox.cli.common import UsageError


def embedded(urls: list[str], concurrency: Optional[int]):
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
        client = SandboxClient(urls or None, local=embedded(urls, concurrency))
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
