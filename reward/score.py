"""``compute_score``: one completion against its ground truth, as a reward dict (verl's
``custom_reward_function`` signature, which :mod:`judgebox.integrations.verl` exports; the agent
loop's default scorer uses it too); ``compute_score_batch``: a list of them in one sandbox batch
call (verl's ``BatchRewardManager`` signature)."""

from __future__ import annotations

import concurrent.futures
import difflib
import json
import threading
from collections.abc import Mapping
from typing import Any, Callable, Optional, Sequence, TypeVar, Union

from judgebox.sandbox.client import SandboxClient
from judgebox.sandbox.errors import SandboxUnavailable

from .extract import extract_code
from .judge import ON_TAMPER, default_client, judge, judge_batch, warn_unknown
from .spec import TestDataError, TestSpec
from .tamper import signal_kinds
from .verdict import Judgement, Verdict, unscorable_reason

_clients: dict[str, SandboxClient] = {}
_lock = threading.Lock()
_pool = concurrent.futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="judgebox-score")
T = TypeVar("T")


def client_for(url: Optional[str]) -> SandboxClient:
    """A shared client for a sandbox URL (verl passes ``.../run_code``; the suffix is dropped),
    checked (:meth:`~judgebox.sandbox.client.client.SandboxClient.check`, a few seconds) when first made.

    Raises:
        SandboxUnavailable: no sandbox answers at ``url`` (checked again on the next call).
    """
    if not url:
        return default_client()
    base = url if url.startswith("ray://") else url.rstrip("/")  # ray:// alone is a URL; its parser drops the suffixes
    for suffix in ("/run_code", "/run_tests"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    with _lock:
        client = _clients.get(base)
    if client is None:
        client = SandboxClient(base)
        try:
            client.check()
        except SandboxUnavailable:
            client.close()
            raise
        with _lock:
            stored = _clients.setdefault(base, client)
        if stored is not client:
            client.close()
        return stored
    return client


#: Every key of a :func:`compute_score` result (verl's ``reward_extra_info`` takes one scalar per key
#: per sample, so each value is a number, a bool, a string or ``None``): key -> (types, meaning). The
#: one list of the extras; ``docs/guides/rewards.md`` shows it and ``tests/reward/test_score_keys.py``
#: checks every key of real results against it.
SCORE_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "score": ((float, type(None)), "the reward: 1.0/0.0 (binary) or the pass rate; infra_score (default "
                                   "0.0) when the verdict is unknown"),
    "acc": ((bool,), "every test passed"),
    "pass_rate": ((float, type(None)), "n_passed / n_total; None when the verdict is unknown"),
    "n_passed": ((int,), "tests passed"),
    "n_total": ((int,), "tests of the problem (every one counts)"),
    "verdict": ((str,), "the Verdict value (accepted, wrong_answer, ..., infra_error)"),
    "infra_error": ((bool,), "the score carries no information (sandbox or test-data failure): mask it"),
    "unscorable_reason": ((str, type(None)), "'infrastructure' or 'test_data' when infra_error, else None"),
    "tamper_signals": ((str,), "the kinds of tamper signal the candidate's code raised, sorted and joined by "
                               "',' ('' when none; judgebox.reward.tamper)"),
    "forgeable": ((bool,), "the tests share the solution's process, so a deliberate program could forge "
                           "the verdict"),
}
#: The keys of every :func:`compute_score` result, in order (:data:`SCORE_FIELDS`).
SCORE_KEYS = tuple(SCORE_FIELDS)

#: The keywords :func:`compute_score` and :func:`compute_score_batch` read (their docstrings say what
#: each does): verl's ``custom_reward_function.reward_kwargs`` reach them as keywords.
SCORE_KWARGS = ("sandbox_fusion_url", "sandbox_url", "score_mode", "language", "extract_policy",
                "stop_on_first_failure", "total_timeout", "memory_limit_mb", "run_timeout",
                "concurrent_semaphore", "infra_score", "on_tamper")
#: Keywords verl itself passes to a custom reward function beside ``data_source``, ``solution_str``,
#: ``ground_truth`` and ``extra_info`` (or the batch's plurals): accepted and ignored, so that verl's
#: calls never fail. Any other keyword is a ``TypeError`` (a misspelt ``reward_kwargs`` entry used to
#: change the reward silently). keyword -> where verl passes it (verl 0.9).
VERL_KWARGS: dict[str, str] = {
    "reward_router_address": "the reward loop's managers when a reward model router runs "
                             "(verl/experimental/reward_loop/reward_manager/{naive,dapo,gdpo,limited,remote,batch}.py, "
                             "extra_reward_kwargs)",
    "reward_model_tokenizer": "beside reward_router_address, the same managers (extra_reward_kwargs)",
}


def compute_score(data_source: Optional[str] = None, solution_str: str = "", ground_truth: Any = None,
                  extra_info: Optional[dict] = None, **kwargs: Any) -> dict[str, Any]:
    """verl ``custom_reward_function``: score one completion. Thread-safe.

    Args:
        data_source: the dataset name (informational).
        solution_str: the model completion (a ``str``; ``None`` or ``""`` is a wrong answer); the code
            is extracted with :func:`judgebox.reward.extract.extract_code`. ``bytes`` are refused, not
            decoded: verl passes the tokenizer's text, so bytes are a caller's mistake and judgebox does
            not guess their encoding.
        ground_truth: a :class:`TestSpec` (object, dict or JSON string with ``kind``), verl/APPS
            ``in_outs`` or open-r1 ``verification_info`` (dict or JSON string; a ``language`` key
            sets the language).
        extra_info: ``None`` or a dict; may carry ``language``.
        kwargs (all optional): ``sandbox_fusion_url``/``sandbox_url`` (default: environment, else
            embedded), ``score_mode`` (``"binary"`` default, or ``"pass_rate"``), ``language``,
            ``extract_policy`` (``"last"``/``"first"``), ``stop_on_first_failure`` (binary mode
            only; default True), ``total_timeout`` (seconds for the whole call, default 600; the
            sandbox stops the tests at :func:`tests_budget` of it and reports the rest as timeouts),
            ``memory_limit_mb`` (MiB) and ``run_timeout`` (seconds per test) overriding the spec,
            ``concurrent_semaphore`` (held while the sandbox runs this submission),
            ``infra_score`` (score reported when the verdict is unknown, default 0.0; check
            ``infra_error``), ``on_tamper`` (``"report"`` or ``"reject"``: see
            :func:`judgebox.reward.judge.judge`; default the spec's); these are :data:`SCORE_KWARGS`.
            The keywords verl itself passes (:data:`VERL_KWARGS`) are accepted and ignored.

    Returns:
        a dict with exactly :data:`SCORE_KEYS`, described in :data:`SCORE_FIELDS`: ``score`` (float),
        ``acc`` (bool), ``pass_rate`` (float or ``None`` when unknown), ``n_passed``, ``n_total`` (every
        test counts), ``verdict`` (a :class:`Verdict` value), ``infra_error`` (True when the sandbox
        failed or the test data is bad: the score then carries no information and should be masked;
        the reason is logged as a warning on the ``judgebox.reward`` logger, once per distinct
        message), ``unscorable_reason`` (``"infrastructure"`` or ``"test_data"`` when ``infra_error``,
        else ``None``: which failed, the sandbox or the dataset), ``tamper_signals`` (the kinds the
        candidate's code raised, joined by ``,``) and ``forgeable``. Every result has every key, as
        verl's ``reward_extra_info`` needs.

    Raises:
        TypeError: a keyword that is none of the above (the message names the closest known one), a
            ``solution_str`` that is not a ``str`` or ``None``, or an ``extra_info`` that is not a dict
            or ``None``.
        ValueError: ``on_tamper`` is not ``"report"`` or ``"reject"``, or ``score_mode`` is not
            ``"binary"`` or ``"pass_rate"``.
    """
    _check_keywords("compute_score", kwargs, ("data_source", "solution_str", "ground_truth", "extra_info"))
    _check_sample("compute_score", solution_str, "solution_str", extra_info, "extra_info")
    _on_tamper(kwargs)
    _binary(kwargs)
    prepared = _prepared(solution_str, ground_truth, extra_info, kwargs)
    if isinstance(prepared, dict):
        return prepared
    spec, code = prepared
    binary = _binary(kwargs)
    try:
        client = client_for(kwargs.get("sandbox_fusion_url") or kwargs.get("sandbox_url"))
    except SandboxUnavailable as exc:  # a dead URL is the sandbox's failure, told in seconds
        return _score(Judgement(verdict=Verdict.infra_error, n_total=spec.n_tests, message=str(exc)), binary, kwargs)
    stop = binary and kwargs.get("stop_on_first_failure", True)
    total = float(kwargs.get("total_timeout", 600))
    future = _pool.submit(_gated, kwargs.get("concurrent_semaphore"), judge, spec, code, client=client,
                          stop_on_first_failure=stop, on_tamper=_on_tamper(kwargs), total_timeout=tests_budget(total))
    try:
        j = future.result(timeout=total)
    except concurrent.futures.TimeoutError:
        j = Judgement(verdict=Verdict.infra_error, n_total=spec.n_tests, message="total_timeout exceeded")
    return _score(j, binary, kwargs)


def compute_score_batch(data_sources: Optional[Sequence[Optional[str]]] = None,
                        solution_strs: Sequence[str] = (), ground_truths: Sequence[Any] = (),
                        extra_infos: Optional[Sequence[Optional[dict]]] = None, **kwargs: Any) -> list[dict[str, Any]]:
    """verl ``BatchRewardManager``'s ``compute_score``: :func:`compute_score` of every completion,
    with one sandbox batch call (:func:`~judgebox.reward.judge.judge_batch`: over HTTP one
    ``POST /run_tests_batch`` per chunk of the client's ``batch_max_items``; embedded, the engine
    runs them at once) instead of one call per completion.

    Args:
        data_sources, solution_strs, ground_truths, extra_infos: one entry per completion (verl's
            lists; ``data_sources`` and ``extra_infos`` may be ``None``).
        kwargs: those of :func:`compute_score`, for the whole batch; ``total_timeout`` (seconds,
            default 600) bounds the whole batch, ``concurrent_semaphore`` is held while it runs.

    Returns:
        one dict per completion, in order, equal to what :func:`compute_score` returns for it.

    Raises:
        TypeError: a keyword, a ``solution_strs[i]`` or an ``extra_infos[i]`` is bad as for
            :func:`compute_score` (the message names it).
        ValueError: the sequences differ in length, or a keyword's value is bad as for :func:`compute_score`.
    """
    _check_keywords("compute_score_batch", kwargs, ("data_sources", "solution_strs", "ground_truths", "extra_infos"))
    n = len(solution_strs)
    extra_infos = list(extra_infos) if extra_infos is not None else [None] * n
    if len(ground_truths) != n or len(extra_infos) != n or (data_sources is not None and len(data_sources) != n):
        raise ValueError(f"compute_score_batch: {n} solution_strs, {len(ground_truths)} ground_truths and "
                         f"{len(extra_infos)} extra_infos; pass one of each per completion")
    for i, (s, e) in enumerate(zip(solution_strs, extra_infos)):
        _check_sample("compute_score_batch", s, f"solution_strs[{i}]", e, f"extra_infos[{i}]")
    binary, _ = _binary(kwargs), _on_tamper(kwargs)
    scores: list[Any] = [_prepared(s, g, e, kwargs) for s, g, e in zip(solution_strs, ground_truths, extra_infos)]
    todo = [i for i, p in enumerate(scores) if not isinstance(p, dict)]
    if not todo:
        return scores
    specs, codes = [scores[i][0] for i in todo], [scores[i][1] for i in todo]
    try:
        client = client_for(kwargs.get("sandbox_fusion_url") or kwargs.get("sandbox_url"))
    except SandboxUnavailable as exc:  # a dead URL is the sandbox's failure, told in seconds
        judgements = [Judgement(verdict=Verdict.infra_error, n_total=s.n_tests, message=str(exc)) for s in specs]
    else:
        stop = binary and kwargs.get("stop_on_first_failure", True)
        total = float(kwargs.get("total_timeout", 600))
        future = _pool.submit(_gated, kwargs.get("concurrent_semaphore"), judge_batch, specs, codes, client=client,
                              stop_on_first_failure=stop, on_tamper=_on_tamper(kwargs), total_timeout=tests_budget(total))
        try:
            judgements = future.result(timeout=total)
        except concurrent.futures.TimeoutError:
            judgements = [Judgement(verdict=Verdict.infra_error, n_total=s.n_tests, message="total_timeout exceeded")
                          for s in specs]
    for i, j in zip(todo, judgements):
        scores[i] = _score(j, binary, kwargs)
    return scores


def _check_keywords(where: str, kwargs: dict[str, Any], params: tuple[str, ...]) -> None:
    """``TypeError`` for a keyword that is neither :data:`SCORE_KWARGS` nor :data:`VERL_KWARGS`,
    naming the closest of those and ``params`` (the function's named parameters)."""
    for name in kwargs:
        if name not in SCORE_KWARGS and name not in VERL_KWARGS:
            close = difflib.get_close_matches(name, [*params, *SCORE_KWARGS], n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"known keywords: {', '.join(SCORE_KWARGS)}"
            raise TypeError(f"{where} got an unexpected keyword argument {name!r}; {hint}")


def _check_sample(where: str, solution_str: Any, solution_name: str, extra_info: Any, extra_name: str) -> None:
    """``TypeError`` naming the argument when a completion is not text or its ``extra_info`` not a dict."""
    if solution_str is not None and not isinstance(solution_str, str):
        hint = " (decode it first; judgebox does not guess an encoding)" if isinstance(solution_str, (bytes, bytearray)) else ""
        raise TypeError(f"{where}: {solution_name} must be a str (the completion) or None, "
                        f"got {type(solution_str).__name__}{hint}")
    if extra_info is not None and not isinstance(extra_info, Mapping):
        raise TypeError(f"{where}: {extra_name} must be a dict or None, got {type(extra_info).__name__}")


def _binary(kwargs: dict[str, Any]) -> bool:
    """Whether the ``score_mode`` keyword asks for the binary score (``ValueError`` names the values:
    a misspelt mode silently fell back to binary, and a run trained on the wrong reward)."""
    mode = kwargs.get("score_mode", "binary")
    if mode not in ("binary", "pass_rate"):
        raise ValueError(f"score_mode: {mode!r} is not 'pass_rate' or 'binary'")
    return mode == "binary"


def _on_tamper(kwargs: dict[str, Any]) -> Optional[str]:
    """The ``on_tamper`` keyword, checked before any work is queued (``ValueError`` names the values)."""
    value = kwargs.get("on_tamper")
    if value not in (None, *ON_TAMPER):
        raise ValueError(f"on_tamper: {value!r} is not one of {', '.join(ON_TAMPER)}")
    return value


def _prepared(solution_str: str, ground_truth: Any, extra_info: Optional[dict],
              kwargs: dict[str, Any]) -> Union[dict[str, Any], tuple[TestSpec, str]]:
    """``(spec, code)`` of one completion, or its final score dict when its test data is bad."""
    extra_info = extra_info or {}
    language = kwargs.get("language") or extra_info.get("language") or "python"
    overrides: dict[str, Any] = {}
    if kwargs.get("language") or extra_info.get("language"):
        overrides["language"] = language
    if kwargs.get("memory_limit_mb"):
        overrides["memory_limit_MB"] = int(kwargs["memory_limit_mb"])
    if kwargs.get("run_timeout"):
        overrides["run_timeout"] = float(kwargs["run_timeout"])
    try:
        spec = TestSpec.from_ground_truth(ground_truth, **overrides)
    except TestDataError as exc:
        given = _given(ground_truth)
        message = f"{exc}; got {given}" if given else str(exc)
        return _score(Judgement(verdict=Verdict.test_data_error, message=message), _binary(kwargs), kwargs)
    return spec, extract_code(solution_str or "", spec.language, kwargs.get("extract_policy", "last"))


def _given(ground_truth: Any) -> Optional[str]:
    """What a ground truth of none of the formats' shapes holds (``None``, ``int``, ``{'inputs': str,
    'outputs': int}``), added to its ``test_data_error`` message: the bare message is the same for all
    of them and is logged once, so a second such row logged nothing. ``None`` when the value has a
    format's shape (the message names the bad field) or is not JSON (the message says so)."""
    if isinstance(ground_truth, (str, bytes)):
        try:
            ground_truth = json.loads(ground_truth)
        except ValueError:
            return None
    if not isinstance(ground_truth, dict):
        return "None" if ground_truth is None else type(ground_truth).__name__
    if "kind" in ground_truth or isinstance(ground_truth.get("test_cases"), list) or (
            isinstance(ground_truth.get("inputs"), list) and isinstance(ground_truth.get("outputs"), list)):
        return None
    fields = [f"{k!r}: {type(v).__name__}" for k, v in list(ground_truth.items())[:6]]
    return "{" + ", ".join(fields + (["..."] if len(ground_truth) > 6 else [])) + "}"


def _gated(gate: Optional[threading.Semaphore], fn: Callable[..., T], *args: Any, **kw: Any) -> T:
    if gate is None:
        return fn(*args, **kw)
    with gate:
        return fn(*args, **kw)


def tests_budget(total_timeout: float) -> float:
    """Seconds the tests may take in the sandbox within a call of ``total_timeout`` seconds: what is
    left after 40 s for the compile step and the round trip, at least half of it. The sandbox stops
    the tests there and reports the rest as timeouts, so a slow program is ``time_limit_exceeded``
    (a verdict) before the call's own deadline would make it ``infra_error`` (a masked reward)."""
    return max(total_timeout / 2, total_timeout - 40.0)


def _score(j: Judgement, binary: bool, kwargs: dict[str, Any]) -> dict[str, Any]:
    warn_unknown("compute_score", j)
    unknown = j.verdict in (Verdict.infra_error, Verdict.test_data_error)
    rate = j.pass_rate
    if unknown:
        score = kwargs.get("infra_score", 0.0)
        score = None if score is None else float(score)
    else:
        score = (1.0 if j.passed else 0.0) if binary else float(rate or 0.0)
    return {"score": score, "acc": j.passed, "pass_rate": rate, "n_passed": j.n_passed,
            "n_total": j.n_total, "verdict": j.verdict.value, "infra_error": unknown,
            "unscorable_reason": unscorable_reason(j.verdict), "tamper_signals": signal_kinds(j.tamper_signals),
            "forgeable": j.forgeable}
