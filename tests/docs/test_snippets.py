"""Every command and snippet of README.md and docs/ runs, and every output shown is what it prints.

The pages are the specification: each fenced code block is one test case, named ``PAGE:LINE`` (the
line of its opening fence).

- A ```` ```python ```` block runs as a script, in a subprocess, with this interpreter (the venv the
  tests run in).
- A ```` ```bash ````, ```` ```sh ```` or ```` ```console ```` block runs with bash (``set -eo pipefail``).
  When some of its lines start with ``$ `` those are the commands (a command ending in ``\\`` goes on
  over the next lines) and every other line is their expected stdout; otherwise the whole block is
  the script.
- Blocks of any other language (``yaml``, ``text``, ``json``, ...) and MyST directives are not run.

An HTML comment right before a block's opening fence (blank lines may separate them) gives the
block its markers; several combine, as in ``<!-- snippet: checkout slow -->``:

- ``<!-- snippet: skip REASON -->``: not run, and REASON is printed as the skip reason. Only for what
  cannot run here (a GPU, a trainer run of minutes, Docker, a cluster); REASON names the test under
  ``tests/`` that covers the same thing (checked by :func:`test_skip_reasons_name_a_test`).
- ``<!-- snippet: output -->``: the block is the expected stdout of the previous runnable block of
  the same page.
- ``<!-- snippet: slow -->``, ``<!-- snippet: integration -->``: the case is marked ``slow`` (it
  takes minutes) or ``integration`` (it loads a real model or trainer: transformers, vLLM, TRL).
- ``<!-- snippet: checkout -->``: runs in the repository root instead of a temporary folder (a
  command of the checkout itself: ``scripts/``, ``python -m tests.agent.tiny``); such a block writes
  only into the ignored ``judgebox-results/`` or outside the checkout.
- ``<!-- snippet: server -->``: a ``judgebox serve`` runs for it (the session's shared
  ``live_server``); every ``8080`` in the block is replaced by that server's port.
- ``<!-- snippet: serve -->``: the block starts a server that runs until stopped. It is started in
  the background (every ``8080`` replaced by a free port) and must answer ``GET /v1/ping``; then it
  is stopped with SIGTERM.

Each block runs in a fresh temporary working directory (``checkout``: the repository root) with this
interpreter's ``bin`` folder first on ``PATH`` (so ``judgebox`` and ``python`` are the venv's),
without ``JUDGEBOX_SANDBOX_URL``/``SANDBOX_FUSION_ENDPOINT`` (the embedded sandbox, as on a fresh
machine) and with ``COLUMNS=80`` (rich tables as wide as in a pipe). Expected output is compared
with stdout line by line, trailing spaces dropped: a line ``...`` matches any number of lines, and
``...`` inside a line matches any text there.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
#: the pages: the README and every Markdown page of the docs site (generated pages have no snippets)
PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.md")
                                      if "_generated" not in p.parts and "_build" not in p.parts)
PYTHON_LANGS = {"python", "py"}
SHELL_LANGS = {"bash", "sh", "shell", "console"}
MARKERS = {"skip", "output", "slow", "integration", "checkout", "server", "serve"}
MARKER_RE = re.compile(r"^<!--\s*snippet:\s*(.*?)\s*-->\s*$")
FENCE_RE = re.compile(r"^(`{3,}|~{3,})\s*([^`\s]*)(.*)$")
#: seconds a block may run (slow blocks: a vLLM engine start, an install), under pytest-timeout's 600
TIMEOUT, SLOW_TIMEOUT = 300, 570


@dataclass
class Block:
    """One fenced code block of a page, with the markers of the comment before it."""

    page: Path
    line: int
    lang: str
    text: str
    markers: dict[str, str] = field(default_factory=dict)
    expected: Optional[str] = None  # stdout it must print (an ``output`` block, or a console block's output lines)
    output_of: Optional["Block"] = None  # for an ``output`` block: the block whose stdout it is

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def runnable(self) -> bool:
        return self.lang in PYTHON_LANGS | SHELL_LANGS and "output" not in self.markers

    def script(self) -> str:
        """The code to run: a python script, or a bash script (console ``$ `` lines unprefixed)."""
        if self.lang in PYTHON_LANGS:
            return self.text
        commands, _ = split_console(self.text)
        return commands if commands is not None else self.text


def split_console(text: str) -> tuple[Optional[str], Optional[str]]:
    """``(commands, output)`` of a console block, or ``(None, None)`` when it has no ``$ `` line."""
    lines = text.splitlines()
    if not any(line.startswith("$ ") for line in lines):
        return None, None
    commands, output, continued = [], [], False
    for line in lines:
        if line.startswith("$ ") or continued:
            command = line[2:] if line.startswith("$ ") and not continued else line
            commands.append(command)
            continued = command.rstrip().endswith("\\")
        else:
            output.append(line)
    return "\n".join(commands) + "\n", ("\n".join(output) + "\n" if output else None)


def parse_markers(comment: str) -> dict[str, str]:
    """``skip REASON`` -> {"skip": REASON}; other words -> {word: ""}."""
    words = comment.split()
    markers: dict[str, str] = {}
    for i, word in enumerate(words):
        if word == "skip":
            markers["skip"] = " ".join(words[i + 1:])
            break
        markers[word] = ""
    return markers


def closes(line: str, mark: str) -> bool:
    """Whether ``line`` closes a fence opened with ``mark`` (the same character, at least as many)."""
    text = line.rstrip()
    return text.startswith(mark) and set(text) == {mark[0]}


def parse_page(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` (top level: MyST directive fences are kept out)."""
    blocks: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    pending: Optional[dict[str, str]] = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MARKER_RE.match(line)
        if m:
            pending = parse_markers(m.group(1))
            i += 1
            continue
        fence = FENCE_RE.match(line)
        if fence:
            mark, lang = fence.group(1), fence.group(2).lower()
            body, j = [], i + 1
            while j < len(lines) and not closes(lines[j], mark):
                body.append(lines[j])
                j += 1
            if not lang.startswith("{"):
                blocks.append(Block(page, i + 1, lang, "\n".join(body) + "\n", pending or {}))
            pending = None
            i = j + 1
            continue
        if line.strip():
            pending = None
        i += 1
    # outputs: an ``output`` block belongs to the previous runnable block; a console block carries its own
    previous: Optional[Block] = None
    for block in blocks:
        if "output" in block.markers:
            if previous is None:
                raise AssertionError(f"{block.id}: an output block with no runnable block before it")
            if previous.expected is not None:
                raise AssertionError(f"{block.id}: {previous.id} already has an expected output")
            previous.expected = block.text
            block.output_of = previous
        elif block.runnable:
            if block.lang in SHELL_LANGS:
                block.expected = split_console(block.text)[1]
            previous = block
    return blocks


BLOCKS = [b for page in PAGES for b in parse_page(page)]
RUNNABLE = [b for b in BLOCKS if b.runnable]


def params(server: bool) -> list:
    out = []
    for b in RUNNABLE:
        if ("server" in b.markers) != server:
            continue
        marks = [getattr(pytest.mark, m) for m in ("slow", "integration") if m in b.markers]
        out.append(pytest.param(b, id=b.id, marks=marks))
    return out


def output_regex(expected: str) -> re.Pattern:
    """``expected`` as a pattern: a ``...`` line is any lines, ``...`` in a line any text."""
    parts = []
    for line in expected.rstrip("\n").splitlines():
        line = line.rstrip()
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append("[^\n]*".join(re.escape(p) for p in line.split("...")) + r"\n")
    return re.compile("".join(parts))


def normalize(stdout: str) -> str:
    text = "\n".join(line.rstrip() for line in stdout.splitlines())
    return text + "\n" if text else ""


def assert_output(block: Block, stdout: str) -> None:
    if block.expected is None:
        return
    got = normalize(stdout)
    if not output_regex(block.expected).fullmatch(got):
        raise AssertionError(f"{block.id}: the output shown is not what it prints.\n"
                             f"--- shown ---\n{block.expected}--- printed ---\n{got}")


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("JUDGEBOX_SANDBOX_URL", "SANDBOX_FUSION_ENDPOINT", "PYTHONPATH")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["COLUMNS"] = "80"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def command(block: Block, text: str) -> list[str]:
    if block.lang in PYTHON_LANGS:
        return [sys.executable, "-c", text]
    return ["bash", "-c", "set -eo pipefail\n" + text]


def run_block(block: Block, cwd: Path, text: Optional[str] = None) -> None:
    text = text if text is not None else block.script()
    timeout = SLOW_TIMEOUT if "slow" in block.markers else TIMEOUT
    proc = subprocess.run(command(block, text), cwd=cwd, env=environment(), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise AssertionError(f"{block.id} exited with status {proc.returncode}\n--- script ---\n{text}"
                             f"--- stdout ---\n{proc.stdout[-4000:]}--- stderr ---\n{proc.stderr[-6000:]}")
    assert_output(block, proc.stdout)


def workdir(block: Block, tmp_path: Path) -> Path:
    return ROOT if "checkout" in block.markers else tmp_path


def serve_block(block: Block, cwd: Path) -> None:
    """Start a block that serves until stopped, wait for ``/v1/ping``, stop it."""
    from tests.conftest import free_port

    port = free_port()
    text = block.script().replace("8080", str(port))
    proc = subprocess.Popen(command(block, text), cwd=cwd, env=environment(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"{block.id} exited with status {proc.returncode} before serving:\n"
                                     f"{proc.stdout.read()[-4000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/ping", timeout=2).json() == "pong":
                    return
            except (httpx.HTTPError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"{block.id}: no answer on /v1/ping within 60 s")
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.mark.slow
@pytest.mark.parametrize("block", params(server=False))
def test_snippet(block: Block, tmp_path: Path) -> None:
    if "skip" in block.markers:
        pytest.skip(f"{block.id}: {block.markers['skip']}")
    if "serve" in block.markers:
        serve_block(block, workdir(block, tmp_path))
        return
    run_block(block, workdir(block, tmp_path))


@pytest.mark.parametrize("block", params(server=True))
def test_server_snippet(block: Block, live_server: str, tmp_path: Path) -> None:
    if "skip" in block.markers:
        pytest.skip(f"{block.id}: {block.markers['skip']}")
    port = live_server.rsplit(":", 1)[1]
    run_block(block, workdir(block, tmp_path), block.script().replace("8080", port))


# -- the pages themselves ------------------------------------------------------------------------


def test_markers_are_known() -> None:
    """A misspelt marker would silently run (or not run) a block: every word must be a marker."""
    bad = [f"{b.id}: {w}" for b in BLOCKS for w in b.markers if w not in MARKERS]
    assert not bad, f"unknown snippet markers (known: {sorted(MARKERS)}): {bad}"
    unused = [f"{b.id}: {b.lang}" for b in BLOCKS if "output" in b.markers and b.output_of is None]
    assert not unused, unused


def test_skip_reasons_name_a_test() -> None:
    """A skipped block says why and which test under tests/ covers it; that test exists."""
    problems = []
    for b in BLOCKS:
        if "skip" not in b.markers:
            continue
        named = re.findall(r"tests/[\w/]+\.py", b.markers["skip"])
        if not named:
            problems.append(f"{b.id}: the skip reason names no test (tests/...py)")
        problems += [f"{b.id}: {t} does not exist" for t in named if not (ROOT / t).is_file()]
    assert not problems, "\n".join(problems)


def test_blocks_are_where_the_parser_sees_them() -> None:
    """Fences start at the first column (an indented one would be neither run nor skipped), and a
    console block has ``$ `` commands (otherwise its output lines would run as a script)."""
    indented = [f"{page.relative_to(ROOT)}:{i}" for page in PAGES
                for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
                if re.match(r"^\s+(```|~~~)", line)]
    assert not indented, f"indented code fences: {indented}"
    for b in RUNNABLE:
        if b.lang == "console":
            assert split_console(b.text)[0] is not None, f"{b.id}: a console block without a '$ ' command"


#: old import paths (before the one-namespace move) and paths outside the repository (a BUG-nnn id is
#: fine: docs/explanation/cases.md defines each, tests/docs/test_cases_page.py checks it)
STALE = [
    (re.compile(r"^\s*(from|import)\s+(sandbox|reward|agent)\b", re.M), "an import of the old top-level package"),
    (re.compile(r"(?<![\w.])(sandbox|reward|agent)\.(SandboxClient|LocalSandbox|compute_score|check_correctness|"
                r"code_reward|make_code_reward|score_batch|judge_many|tools|collate|ToolAgentLoop|AgentLoopConfig)\b"),
     "an old module path"),
    (re.compile(r"pkg://reward\b|reward/verl\.py|agent/tools/verl_adapter"), "an old verl path"),
    (re.compile(r"\.\./shared"), "a path outside the repository"),
]


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "import-paths.md"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_stale_paths(page: Path) -> None:
    """The pages use the new import paths only (docs/reference/import-paths.md keeps the old ones)."""
    text = page.read_text(encoding="utf-8")
    found = []
    for pattern, what in STALE:
        for m in pattern.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{page.relative_to(ROOT)}:{line}: {m.group(0)!r}: {what}")
    assert not found, "\n".join(found)


#: names that are not modules: the placeholder of import-paths.md, and the data folders (``datasets/``,
#: ``configs/``), which a wheel installs as package data and an editable install leaves in the checkout
DATA_PACKAGES = {"judgebox.datasets", "judgebox.configs"}


def test_python_paths_import() -> None:
    """Every ``judgebox.…`` dotted name written in the pages exists: a module, or a name in one.

    Modules are found without running them (``find_spec``), and a name a package exports lazily
    (listed in its ``__all__``, pinned by tests/test_public_api.py) is not loaded: the check stays
    fast and needs neither verl nor vLLM."""
    import importlib
    import importlib.util

    names = set()
    for page in PAGES:
        names |= set(re.findall(r"(?<![\w.-])judgebox(?:\.[A-Za-z_]\w*)+", page.read_text(encoding="utf-8")))
    missing = []
    for name in sorted(names):
        parts = name.split(".")
        if parts[-1] == "X" or name in DATA_PACKAGES:
            continue
        for cut in range(len(parts), 0, -1):
            try:
                spec = importlib.util.find_spec(".".join(parts[:cut]))
            except ImportError:
                spec = None
            if spec is None:
                continue
            rest = parts[cut:]
            if rest:
                obj = importlib.import_module(".".join(parts[:cut]))
                if rest[0] in getattr(obj, "__all__", ()) and len(rest) == 1:
                    break
                try:
                    for attr in rest:
                        obj = getattr(obj, attr)
                except AttributeError:
                    missing.append(name)
            break
        else:
            missing.append(name)
    assert not missing, f"names in the docs that do not exist: {missing}"


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path: Path) -> None:
    """The site builds strictly (``-W``: any warning fails), as scripts/check builds it."""
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html",
                           str(ROOT / "docs"), str(tmp_path / "html")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-6000:]


def test_harness_reads_its_own_conventions() -> None:
    """The parser and matcher this file relies on (canned pages, no subprocess)."""
    assert split_console("$ echo a \\\n  b\na b\n") == ("echo a \\\n  b\n", "a b\n")
    assert split_console("echo a\n") == (None, None)
    assert parse_markers("skip needs a GPU; tests/gpu/x.py") == {"skip": "needs a GPU; tests/gpu/x.py"}
    assert parse_markers("checkout slow") == {"checkout": "", "slow": ""}
    pattern = output_regex("a\n...\nz ... end\n")
    assert pattern.fullmatch("a\nz 1 2 end\n") and pattern.fullmatch("a\nb\nc\nz x end\n")
    assert not pattern.fullmatch("a\nz end\nmore\n")
