"""Wire models of the SandboxFusion HTTP API, plus judgebox's extension fields.

The field names, defaults and enums follow SandboxFusion's ``sandbox/server/sandbox_api.py`` and the
``sandbox_fusion`` client package (``sandbox_fusion/models.py``), so that verl's ``call_sandbox_api``,
the official client and curl users get byte-compatible JSON. Extra response fields (``cpu_time``,
``stdout_truncated``, ``stderr_truncated``, ``memory_exceeded``) are ignored by those clients.

Units: every ``*_timeout``, ``execution_time`` and ``cpu_time`` is in seconds (float);
``memory_limit_MB`` is in MiB (``-1`` or ``0`` = the server default, as in SandboxFusion, which
limits only a value above 0); file contents are base64 strings.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import posixpath
from enum import Enum
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from .isolation.disk import SCRATCH_MOUNTS
from .languages import check_cpp_std, closest_language, installed_languages
from .speedups.preload import check_preload

#: A ``g++ -std=`` value (``c++17``, ``gnu++20``, ...) or ``None`` for the default.
CppStd = Annotated[Optional[str], AfterValidator(check_cpp_std)]

#: Every language name SandboxFusion accepts. A valid name whose toolchain is not installed returns
#: ``SandboxError`` (not HTTP 422); a name outside this list is a malformed request (HTTP 422).
SANDBOX_FUSION_LANGUAGES = (
    "python", "python2", "cpp", "nodejs", "go", "go_test", "java", "php", "csharp", "bash",
    "typescript", "sql", "rust", "cuda", "lua", "R", "perl", "D_ut", "ruby", "scala", "julia",
    "pytest", "junit", "kotlin_script", "jest", "verilog", "python_gpu", "lean", "swift", "racket",
    "gtest", "react",
)


def _runtime_node_path() -> Optional[str]:
    """The default program runtime's ``node_modules`` (``None``: none is built)."""
    from .runtime import find_runtime

    runtime = find_runtime(None)
    return runtime.node_path if runtime else None


def check_language(value: Any) -> Any:
    """``value`` unless it is a string that is not one of :data:`SANDBOX_FUSION_LANGUAGES`.

    Raises:
        ValueError: naming the closest language (``pyhton`` -> ``python``, ``c++`` -> ``cpp``), the
            languages installed here first, then the other SandboxFusion names.
    """
    if isinstance(value, str) and value not in SANDBOX_FUSION_LANGUAGES:
        import sys

        installed = installed_languages(sys.executable, _runtime_node_path())
        close = closest_language(value, SANDBOX_FUSION_LANGUAGES)
        others = [n for n in SANDBOX_FUSION_LANGUAGES if n not in installed]
        raise ValueError(f"{value!r} is not a language name{f'; did you mean {close!r}?' if close else ';'} "
                         f"installed here: {', '.join(installed)}; other SandboxFusion names (not installed "
                         f"here): {', '.join(others)}")
    return value


#: A SandboxFusion language name; another string is a 422 that suggests the closest name.
Language = Annotated[Literal[SANDBOX_FUSION_LANGUAGES], BeforeValidator(check_language)]  # type: ignore[valid-type]


class CommandRunStatus(str, Enum):
    """Outcome of one command (compile or run): it finished, the sandbox failed, or it timed out."""

    Finished = "Finished"
    Error = "Error"
    TimeLimitExceeded = "TimeLimitExceeded"


class RunStatus(str, Enum):
    """Outcome of a whole request (SandboxFusion's rule, see :func:`judgebox.sandbox.models.overall_status`)."""

    Success = "Success"
    Failed = "Failed"
    SandboxError = "SandboxError"


#: The longest file or folder name (bytes, UTF-8) and the longest relative path (bytes) a request
#: may give: Linux's ``NAME_MAX`` and ``PATH_MAX - 1``; longer ones the server could not write.
NAME_MAX, PATH_MAX = 255, 4095


def validate_run_paths(paths: list[str], field: str) -> list[str]:
    """``paths`` unchanged after :func:`validate_run_path` accepted each (raises its ``ValueError``)."""
    for path in paths:
        validate_run_path(path, field)
    return paths


def validate_run_path(path: str, field: str) -> str:
    """Check that ``path`` names a file of the run: relative to its working folder
    (:func:`validate_relative_path`), or absolute under one of the run's own scratch mounts
    (:data:`~judgebox.sandbox.isolation.disk.SCRATCH_MOUNTS`: ``/tmp``, ``/var/tmp``, ``/dev/shm``,
    ``/mnt``), as SandboxFusion accepts them (e.g. ``fetch_files: ["/mnt/b"]``). An absolute path is
    usable only under full isolation, where those folders are the run's own; the executor refuses it
    otherwise (HTTP 422).

    Returns:
        the normalised path (absolute ones stay absolute).

    Raises:
        ValueError: as :func:`validate_relative_path`, or an absolute path outside the scratch mounts.
    """
    if not path.startswith("/"):
        return validate_relative_path(path, field)
    rel = validate_relative_path(path.lstrip("/"), field)  # lengths, encoding, NUL, folders, ``..``
    norm = "/" + rel
    if not any(norm.startswith(mount + "/") for mount in SCRATCH_MOUNTS):
        roots = ", ".join(SCRATCH_MOUNTS)
        raise ValueError(f"{field}: {path!r} is outside the run; give a path relative to the working folder, "
                         f"or an absolute one under the run's own {roots} (full isolation only)")
    return norm


def validate_relative_path(path: str, field: str) -> str:
    """Check that ``path`` names a file inside the run's working directory.

    Args:
        path: a POSIX path as sent by the client.
        field: the request field name, used in the error message.

    Returns:
        the normalised relative path.

    Raises:
        ValueError: the path is empty, absolute, climbs out with ``..``, is not UTF-8 text, or is
            longer than Linux allows (a name over :data:`NAME_MAX` bytes, a path over
            :data:`PATH_MAX` bytes, both in UTF-8); pydantic turns this into an HTTP 422 that names
            the field.
    """
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"{field}: {path!r} is not valid UTF-8 text (a lone surrogate); "
                         "give the path as plain Unicode") from None
    if size > PATH_MAX:
        raise ValueError(f"{field}: a path of {size} bytes is longer than the {PATH_MAX} bytes (UTF-8) "
                         f"Linux allows; shorten {path[:40]!r}...")
    long = next((part for part in path.split("/") if len(part.encode("utf-8")) > NAME_MAX), None)
    if long is not None:
        raise ValueError(f"{field}: the name {long[:40]!r}... in {path[:60]!r} is {len(long.encode('utf-8'))} bytes, "
                         f"longer than the {NAME_MAX} bytes (UTF-8) a file or folder name may have; shorten it")
    norm = posixpath.normpath(path)
    if not path or path.startswith("/") or norm == ".." or norm.startswith("../") or "\x00" in path:
        raise ValueError(
            f"{field}: {path!r} must be a relative path inside the working directory "
            "(no leading '/', no '..')"
        )
    if norm == "." or path.endswith("/"):
        raise ValueError(f"{field}: {path!r} names a folder, not a file; give a file path such as 'data/input.txt'")
    return norm


def decode_files(files: dict[str, Optional[str]], field: str = "files") -> dict[str, bytes]:
    """Decode a ``{path: base64}`` map. ``None`` content means an empty file.

    Raises:
        ValueError: a path is not relative/inside, or a content is not valid base64.
    """
    out: dict[str, bytes] = {}
    for path, content in files.items():
        rel = validate_run_path(path, field)
        if rel in out:
            raise ValueError(f"{field}: {path!r} names the same file as another key; give each file once")
        try:
            out[rel] = _b64decode(content or "")
        except (binascii.Error, ValueError) as exc:
            raise ValueError(f"{field}[{path!r}]: content is not valid base64 ({exc})") from exc
    clash = sorted(_folders_among(out, out))
    if clash:
        raise ValueError(f"{field}: {clash[0]!r} is a file and also the folder of another file; rename one of them")
    return out


#: Contents up to this many base64 characters are decoded through :func:`_b64decode_cached`.
_CACHED_B64_CHARS = 256 << 10


def _b64decode(content: str) -> bytes:
    """Strict base64 decoding; short contents through a small cache: the same text (the Python
    harness's runner files, in every request) is validated, then written, so it was decoded twice
    per request (about 1 ms each time for the runner files) and again for every request."""
    if len(content) <= _CACHED_B64_CHARS:
        return _b64decode_cached(content)
    return base64.b64decode(content, validate=True)


@functools.lru_cache(maxsize=32)  # at most 32 x 192 KiB decoded bytes are kept
def _b64decode_cached(content: str) -> bytes:
    return base64.b64decode(content, validate=True)


def _folders_among(paths, others) -> list[str]:
    """The ``paths`` that are a folder of one of ``others`` (relative, normalised): each found by
    bisecting the sorted ``others`` for ``path + "/"``, never by listing every parent folder (whose
    text, for deep paths, grows with the square of the depth)."""
    ordered = sorted(others)
    found = []
    for rel in paths:
        i = bisect.bisect_left(ordered, rel + "/")
        if i < len(ordered) and ordered[i].startswith(rel + "/"):
            found.append(rel)
    return found


def _unicode_text(value: str) -> str:
    """``value`` if it has a UTF-8 encoding (no lone surrogate such as ``\\ud800``), else ValueError."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"holds {value[exc.start:exc.end]!r}, a lone surrogate with no UTF-8 encoding; "
                         "send valid Unicode text") from None
    return value


def _argument(value: str) -> str:
    """A command-line argument: UTF-8 text without a NUL character (an argument cannot hold one)."""
    if "\0" in value:
        raise ValueError("holds a NUL character, which no command-line argument can carry; remove it")
    return _unicode_text(value)


#: Text a program receives (source, stdin, cells): valid Unicode (HTTP 422 otherwise, naming the field).
Text = Annotated[str, AfterValidator(_unicode_text)]
#: One command-line argument.
Argument = Annotated[str, AfterValidator(_argument)]


class _Body(BaseModel):
    """A request body: unknown keys are ignored, as SandboxFusion's server ignores them (clients send
    their own extras), except a key close to a field's name, which is a typo; NaN/Infinity are not
    numbers a limit can hold (422 naming the field)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_misspelt_field(cls, data: Any) -> Any:
        """A key close to a field's name (``run_timout``, ``stdn``, ``memory_limit_mb``, ``idle_timeot``)
        is a 422 naming it, never a run without the limit or the input it meant."""
        if isinstance(data, dict):
            import difflib

            known = [name for name, field in cls.model_fields.items() for name in (name, field.alias) if name]
            for key in data:
                if isinstance(key, str) and key not in known:
                    close = difflib.get_close_matches(key, known, n=1, cutoff=0.8) or \
                        [k for k in known if k.lower() == key.lower()]
                    if close:
                        raise ValueError(f"{key!r} is not a field of this request; did you mean {close[0]!r}?")
        return data


class _Request(_Body):

    files: dict[str, Optional[str]] = Field(
        default_factory=dict, description="path -> base64 content, written before the run: relative to the "
        "working folder, or absolute under /tmp, /var/tmp, /dev/shm or /mnt (full isolation only)"
    )
    fetch_files: list[str] = Field(
        default_factory=list, description="paths returned base64-encoded after the run (keyed as given): "
        "relative to the working folder, or absolute under /tmp, /var/tmp, /dev/shm or /mnt (full isolation only)"
    )

    @field_validator("files")
    @classmethod
    def _check_files(cls, v: dict[str, Optional[str]]) -> dict[str, Optional[str]]:
        decode_files(v)
        return v

    _check_fetch = field_validator("fetch_files")(classmethod(lambda cls, v: validate_run_paths(v, "fetch_files")))


class RunCodeRequest(_Request):
    """``POST /run_code`` body (SandboxFusion ``RunCodeRequest``).

    Fields: ``code`` (source text), ``language`` (one of :data:`SANDBOX_FUSION_LANGUAGES`),
    ``compile_timeout``/``run_timeout`` (seconds, > 0), ``memory_limit_MB`` (MiB; ``-1`` or ``0``
    = server default; clamped to what the host allows), ``disk_limit_MB`` (MiB; judgebox extension, see
    :mod:`judgebox.sandbox.isolation.disk`), ``stdin`` (text fed to a pipe that is then closed;
    ``None`` = empty), ``files``, ``fetch_files`` and ``args`` (appended to the run command, e.g.
    ``["-x"]`` for pytest; SandboxFusion's server field, which its client does not send);
    ``forkserver_preload`` (judgebox extension, :mod:`judgebox.sandbox.speedups.preload`).
    """

    code: Text
    language: Language  # type: ignore[valid-type]
    compile_timeout: float = Field(10, gt=0, description="seconds")
    run_timeout: float = Field(10, gt=0, description="seconds")
    memory_limit_MB: int = Field(-1, ge=-1, description="MiB; -1 or 0 = server default")
    disk_limit_MB: Optional[int] = Field(
        None, ge=1, description="judgebox extension: MiB the run may write (working folder, /tmp, /var/tmp, "
        "/dev/shm together); None = server default (JUDGEBOX_DISK_LIMIT_MB); clamped to the server's maximum")
    stdin: Optional[Text] = None
    args: list[Argument] = Field(
        default_factory=list, description="extra command-line arguments of the run step (SandboxFusion: pytest's)"
    )
    cpp_std: CppStd = Field(
        None, description="judgebox extension: the C++ standard, g++ -std=VALUE (c++17, gnu++20, ...); "
                          "None = gnu++20")
    forkserver_preload: Annotated[list[str], AfterValidator(check_preload)] = Field(
        default_factory=list, description="judgebox extension: standard-library modules the Python program "
        "imports first anyway (e.g. ['ast', 'json']): the run may be forked from an interpreter that imported "
        "them already, as multiprocessing.set_forkserver_preload; ignored by other languages and when a file "
        "of the run shadows one")

    @model_validator(mode="after")
    def _files_keep_the_program(self) -> "RunCodeRequest":
        clash = _clash(_paths(self.files, "files"), *self._program_files())
        if clash:
            raise ValueError(f"files: {clash}")
        return self

    def _program_files(self) -> tuple[str, str, tuple[str, ...]]:
        """The language, the file the program is written to (``""``: unknown language) and the
        fixed names its compile step writes (``main``)."""
        from .languages import RECIPES

        recipe = RECIPES.get(self.language)
        if recipe is None:
            return self.language, "", ()
        return self.language, recipe.source_name(self.code), tuple(o for o in recipe.outputs if "*" not in o)


def _paths(files: dict[str, Optional[str]], field: str) -> set[str]:
    """The normalised paths of a validated ``files`` map."""
    return {validate_run_path(p, field) for p in files}


def _clash(files: set[str], language: str, source: str, outputs: tuple[str, ...],
           request_files: frozenset[str] = frozenset()) -> Optional[str]:
    """Why ``files`` (normalised relative paths) cannot be written next to the program, or ``None``.

    A file may not be the program's source file ``source`` (it would replace the submitted code),
    nor lie under ``source`` or a compile output (``outputs``): those are files, not folders. For a
    case's files, ``request_files`` are the request's: a case file may replace one, but not lie
    under one nor be one of their folders.
    """
    if source in files:
        return (f"{source!r} is the file the {language} program itself is written to; rename that file "
                "(it would replace the submitted code)")
    for rel in sorted(files):
        for own in (source, *outputs):
            if own and rel.startswith(own + "/"):
                return (f"{rel!r} lies under {own!r}, the {language} program's own file, not a folder; "
                        "put it in another folder")
        under = _folders_among(request_files, [rel])
        if under:
            return f"{rel!r} lies under {min(under)!r}, a file of the request's files, not a folder; rename one of them"
    folder = min(_folders_among(files, request_files), default=None)
    if folder is not None:
        return f"{folder!r} is a folder of the request's files, not a file; rename it"
    return None


class TestCaseInput(BaseModel):
    """One case of a ``/run_tests`` batch: its stdin, and optional extra files for that case. An unknown
    key is an error (HTTP 422): ``/run_tests`` compares nothing, so ``expected_output`` silently ignored
    read as a passed test."""

    model_config = ConfigDict(extra="forbid")
    stdin: Optional[Text] = None
    files: dict[str, Optional[str]] = Field(default_factory=dict)
    fetch_files: list[str] = Field(
        default_factory=list, description="judgebox extension: relative paths removed before this case "
                                          "runs and returned (base64) in its run result's files")

    @field_validator("files")
    @classmethod
    def _check_files(cls, v: dict[str, Optional[str]]) -> dict[str, Optional[str]]:
        decode_files(v, "cases[].files")
        return v

    _check_fetch = field_validator("fetch_files")(
        classmethod(lambda cls, v: validate_run_paths(v, "cases[].fetch_files")))


#: The folder of the working folder where a request's ``tests_program`` is compiled and run.
TESTS_FOLDER = "tests"


class RunTestsRequest(RunCodeRequest):
    """``POST /run_tests`` body (judgebox extension): compile once, run every case in a fresh process.

    Same fields as :class:`RunCodeRequest` plus ``cases`` (list of :class:`TestCaseInput`, at least
    one) and ``stop_on_first_failure`` (skip the remaining cases after the first non-zero exit or
    timeout; skipped cases are reported with ``run_result = None``). The top-level ``stdin`` is unused.
    A case's ``files`` may replace a request file for that case, but not the program's source, nor
    lie under it, under the compiled program or under a request file, nor name a folder of the
    request's files (``ValueError`` naming ``cases[i].files``: HTTP 422).
    """

    cases: list[TestCaseInput] = Field(min_length=1)
    stop_on_first_failure: bool = False
    tests_program: Optional[Text] = Field(
        None, description="judgebox extension: a second program in the same language that holds the tests and "
        "no code of the solution. It is compiled apart in the folder 'tests' of the working folder (its own "
        "compile-cache entry), becomes read-only for the run, and is what each case runs, in that folder, with "
        "'--' and the command that runs `code` (relative to the working folder) as its last arguments; "
        "`code` runs only when the tests start it (judgebox's split harnesses)")
    tests_language: Optional[Language] = Field(  # type: ignore[valid-type]
        None, description="judgebox extension: the language of tests_program (None: `language`), e.g. `nodejs` "
        "tests of `typescript` code")
    total_timeout: Optional[float] = Field(
        None, gt=0, description="judgebox extension: seconds the cases may take together (wall time), at "
        "most the server's max_request_seconds; past it the running case is stopped and the rest are not run, "
        "reported as request_time_exceeded (a reward's own deadline: compute_score's total_timeout)")

    @model_validator(mode="after")
    def _case_files_fit(self) -> "RunTestsRequest":
        program, request_files = self._program_files(), frozenset(_paths(self.files, "files"))
        if self.tests_language is not None and self.tests_program is None:
            raise ValueError("tests_language: it names the language of tests_program, and there is none; drop it "
                             "or send tests_program")
        if self.tests_program is not None:
            for field, paths in (("files", request_files),
                                 *((f"cases[{i}].files", _paths(c.files, "cases[].files")) for i, c in enumerate(self.cases))):
                taken = sorted(p for p in paths if p == TESTS_FOLDER or p.startswith(TESTS_FOLDER + "/"))
                if taken:
                    raise ValueError(f"{field}: {taken[0]!r} lies in {TESTS_FOLDER!r}, where tests_program is "
                                     "compiled; put it in another folder")
        for i, case in enumerate(self.cases):
            clash = _clash(_paths(case.files, "cases[].files"), *program, request_files)
            if clash:
                raise ValueError(f"cases[{i}].files: {clash}")
        return self


class CommandRunResult(BaseModel):
    """Result of one command. ``return_code`` is negative for a signal and ``None`` on timeout."""

    status: CommandRunStatus
    execution_time: Optional[float] = None
    return_code: Optional[int] = None
    stdout: Optional[str] = None
    stderr: Optional[str] = None
    # judgebox extensions (ignored by SandboxFusion clients)
    cpu_time: Optional[float] = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    memory_exceeded: bool = False
    disk_exceeded: bool = False
    output_budget_exhausted: bool = Field(
        False, description="judgebox extension: this command's stdout or stderr was cut (or emptied) because the "
        "request's response_limit_bytes, shared by every case and the compile step, ran out here, not because of "
        "its own size (output_limit_bytes)")
    cpu_wait: Optional[float] = Field(
        None, description="judgebox extension: for a command stopped at its time limit, the seconds it waited for "
        "a CPU (a loaded host's doing, not the program's): the longest run-queue wait of any of its processes (a "
        "compiler's, not only its driver's); None when it was not stopped")
    files: dict[str, str] = Field(default_factory=dict, description="the case's fetch_files found after "
                                                                    "the run: path -> base64 content")


class RunCodeResponse(BaseModel):
    """``POST /run_code`` response (SandboxFusion ``RunCodeResponse``)."""

    status: RunStatus
    message: str = ""
    compile_result: Optional[CommandRunResult] = None
    run_result: Optional[CommandRunResult] = None
    executor_pod_name: Optional[str] = None
    files: dict[str, str] = Field(default_factory=dict)


class RunTestsResponse(BaseModel):
    """``POST /run_tests`` response: one compile result and one run result per case (``None`` =
    skipped, or not run because ``request_time_exceeded``)."""

    status: RunStatus
    message: str = ""
    compile_result: Optional[CommandRunResult] = None
    run_results: list[Optional[CommandRunResult]] = Field(default_factory=list)
    executor_pod_name: Optional[str] = None
    request_time_exceeded: bool = Field(
        False, description="judgebox extension: the server's max_request_seconds ran out; every case with "
        "run_result null was not run for that reason (the status is then Failed)")
    tests_compile_result: Optional[CommandRunResult] = Field(
        None, description="judgebox extension: the compile step of the request's tests_program (None: no such "
        "program, or an interpreted language); when it failed no case ran and the status is Failed")


class BatchItemError(BaseModel):
    """One item of a ``POST /run_tests_batch`` that has no result: what the single ``/run_tests`` call
    would have answered instead of HTTP 200.

    ``index`` is the item's position in the batch (0-based); ``status_code`` the HTTP status the
    single call would have had (``422`` invalid item, ``504`` no execution slot in time, ``500`` the
    server failed on it; a client that got no answer for it says ``503``); ``detail`` says why;
    ``retry_after`` (seconds) is set for ``504``.
    """

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=0)
    status_code: int = Field(ge=400, le=599)
    detail: str
    retry_after: Optional[float] = None


#: One item's answer in a batch.
BatchResult = Union[RunTestsResponse, BatchItemError]


def _batch_item_kind(value: Any) -> str:
    """``"error"`` for a :class:`BatchItemError` (or its JSON: it alone has ``status_code``), else ``"result"``."""
    if isinstance(value, dict):
        return "error" if "status_code" in value else "result"
    return "error" if isinstance(value, BatchItemError) else "result"


#: One item's answer in a batch: the :class:`RunTestsResponse` of that request, or its :class:`BatchItemError`.
BatchItem = Annotated[Union[Annotated[RunTestsResponse, Tag("result")], Annotated[BatchItemError, Tag("error")]],
                      Discriminator(_batch_item_kind)]


class RunTestsBatchRequest(_Body):
    """``POST /run_tests_batch`` body (judgebox extension): ``requests``, a list of ``/run_tests`` bodies.

    Each item is validated on its own (a bad one is answered with its :class:`BatchItemError`), so
    the items are plain JSON objects here.
    """

    requests: list[dict[str, Any]]


class RunTestsBatchResponse(BaseModel):
    """``POST /run_tests_batch`` response: ``results[i]`` answers ``requests[i]``, a
    :class:`RunTestsResponse` or a :class:`BatchItemError` (the one with ``status_code``)."""

    results: list[BatchItem]


class RunJupyterRequest(_Request):
    """``POST /run_jupyter`` body. ``cell_timeout`` 0 means no per-cell limit; seconds otherwise."""

    cells: list[Text]
    cell_timeout: float = Field(0, ge=0, description="seconds per cell; 0 = only total_timeout")
    total_timeout: float = Field(45, gt=0, description="seconds for all cells")
    kernel: Literal["python3"] = "python3"


class CellRunResult(BaseModel):
    """Output of one notebook cell: text streams, rich display data, and error records.

    Each of stdout, stderr, the display bundles together and the error text together is capped at
    the server's ``output_limit_bytes`` bytes, cut at a character boundary; the ``*_truncated``
    flags (judgebox extension) say where something was cut or dropped.
    """

    stdout: str = ""
    stderr: str = ""
    display: list[dict[str, Any]] = Field(default_factory=list)
    error: list[dict[str, Any]] = Field(default_factory=list)
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    display_truncated: bool = False
    error_truncated: bool = False


class RunJupyterResponse(BaseModel):
    """``POST /run_jupyter`` response: cells that finished, in order, even after a timeout."""

    status: RunStatus
    message: str = ""
    driver: Optional[CommandRunResult] = None
    cells: list[CellRunResult] = Field(default_factory=list)
    executor_pod_name: Optional[str] = None
    files: dict[str, str] = Field(default_factory=dict)


def overall_status(*results: Optional[CommandRunResult]) -> RunStatus:
    """SandboxFusion's status rule over the steps that ran (``None`` = step did not run).

    Any step ``Error`` -> ``SandboxError``; else any ``TimeLimitExceeded`` or non-zero return code ->
    ``Failed``; else ``Success``.
    """
    ran = [r for r in results if r is not None]
    if any(r.status == CommandRunStatus.Error for r in ran):
        return RunStatus.SandboxError
    if any(r.status == CommandRunStatus.TimeLimitExceeded or r.return_code != 0 for r in ran):
        return RunStatus.Failed
    return RunStatus.Success


# ---- sessions (judgebox extension): one long-lived kernel per session ------------------------------

class CreateSessionRequest(_Body):
    """``POST /sessions`` body.

    Fields: ``language`` (only ``"python"``: an IPython kernel), ``memory_limit_MB`` (MiB for the
    session's kernel and everything it starts; ``-1`` = server default; clamped like ``run_code``),
    ``idle_timeout`` (seconds without a call after which the server closes the session; clamped to
    the server's ``max_session_idle_timeout``).
    """

    language: Literal["python"] = "python"
    memory_limit_MB: int = Field(-1, ge=-1, description="MiB; -1 or 0 = server default")
    idle_timeout: float = Field(300, gt=0, description="seconds idle before the session is closed")


class SessionInfo(BaseModel):
    """A live session as ``POST /sessions`` and ``GET /sessions`` describe it.

    ``session_id`` is ``<replica>-<boot>-<token>``: the replica that holds the session (the server's
    ``replica_id``; a gateway routes on it), the server run that made it (8 hex digits: a restarted
    server recognises its predecessor's ids) and 24 random hex digits. ``memory_limit_MB`` and
    ``idle_timeout`` are the values in force (after clamping); ``idle_s`` is seconds since the last
    call; ``cells`` counts cells run.
    """

    session_id: str
    session_token: Optional[str] = Field(
        None, description="only in the POST /sessions answer: the token every call of the session must send "
        "(HTTP header X-Session-Token); the id alone opens nothing, and the token is never shown again")
    language: str = "python"
    memory_limit_MB: int
    idle_timeout: float
    idle_s: float = 0.0
    cells: int = 0
    busy: bool = False
    queued: int = Field(0, description="cells sent to this session that wait for the running one (first come, "
                                       "first served)")
    executor_pod_name: Optional[str] = None


class SessionList(BaseModel):
    """``GET /sessions``: the caller's live sessions (those whose ``X-Session-Token`` it sent), the
    number of live sessions of the server (``live``: everyone's, a count without ids) and its
    ``max_sessions``."""

    sessions: list[SessionInfo] = Field(default_factory=list)
    live: int = Field(0, description="live sessions on the server, whoever holds them")
    max_sessions: int


class SessionRunRequest(_Body):
    """``POST /sessions/{id}/run`` body: ``code`` (one cell) and ``timeout`` (seconds; default the
    server's ``default_session_timeout``, clamped to ``max_run_timeout``)."""

    code: Text
    timeout: Optional[float] = Field(None, gt=0, description="seconds")


class SessionRunResult(BaseModel):
    """Result of one cell in a session (``POST /sessions/{id}/run``).

    - ``status``: ``Success`` (the cell ran without an exception), ``Failed`` (an exception, a
      timeout, a memory kill or a dead kernel) or ``SandboxError`` (no kernel could be started:
      infrastructure, not a verdict).
    - ``stdout``/``stderr``: the cell's streams, each capped at the server's ``output_limit_bytes``
      bytes at a character boundary (``stdout_truncated``/``stderr_truncated`` say when text was dropped).
    - ``display``: MIME bundles in order; the value of the cell's final expression is one of them
      (``{"text/plain": "42"}``); all of them together capped at ``output_limit_bytes`` bytes
      (``display_truncated``).
    - ``error``: ``{ename, evalue, traceback}`` of the cell's exception (``TimeLimitExceeded``,
      ``MemoryLimitExceeded``, ``CpuLimitExceeded`` or ``KernelDied`` for those outcomes), else
      ``None``; its text capped at ``output_limit_bytes`` bytes (``error_truncated``).
    - ``execution_time``: seconds from sending the cell to its end (kernel restart excluded).
    - ``timed_out``: the cell hit ``timeout``. ``memory_exceeded``: the session's memory limit killed
      the kernel.
    - ``state``: ``"kept"`` (every variable of earlier cells is still there) or ``"lost"`` (the
      kernel was killed or died, during this cell or since the previous call, and this result is the
      first to say so; the next cell runs in a fresh kernel, files in the working directory stay).
    - ``message``: a human-readable note on a lost state or an infrastructure problem (else ``""``).
    """

    status: RunStatus
    stdout: str = ""
    stderr: str = ""
    display: list[dict[str, Any]] = Field(default_factory=list)
    error: Optional[dict[str, Any]] = None
    execution_time: float = 0.0
    memory_exceeded: bool = False
    timed_out: bool = False
    state: Literal["kept", "lost"] = "kept"
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    display_truncated: bool = False
    error_truncated: bool = False
    message: str = ""
    executor_pod_name: Optional[str] = None
