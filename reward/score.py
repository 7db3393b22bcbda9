"""``compute_score``: one completion against its ground truth, as a reward dict (verl's
``custom_reward_function`` signature, which :mod:`judgebox.integrations.verl` exports; the agent
loop's default scorer uses it too)."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any, Optional

from judgebox.sandbox.client import SandboxClient
from judgebox.sandbox.errors import SandboxUnavailable

from .extract import extract_code
from .judge import default_client, judge, warn_unknown
from .spec import TestDataError, TestSpec
from .verdict import Judgement, Verdict, unscorable_reason

_clients: dict[str, SandboxClient] = {}
_lock = threading.Lock()
_pool = concurrent.futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="judgebox-score")


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


#: The keys of every :func:`compute_score` result.
SCORE_KEYS = ("score", "acc", "pass_rate", "n_passed", "n_total", "verdict", "infra_error", "unscorable_reason")


def compute_score(data_source: Optional[str] = None, solution_str: str = "", ground_truth: Any = None,
                  extra_info: Optional[dict] = None, **kwargs: Any) -> dict[str, Any]:
    """verl ``custom_reward_function``: score one completion. Thread-safe; unknown kwargs are ignored.

    Args:
        data_source: the dataset name (informational).
        solution_str: the model completion; the code is extracted with
            :func:`judgebox.reward.extract.extract_code`.
        ground_truth: a :class:`TestSpec` (object, dict or JSON string with ``kind``), verl/APPS
            ``in_outs`` or open-r1 ``verification_info`` (dict or JSON string; a ``language`` key
            sets the language).
        extra_info: may carry ``language``.
        kwargs (all optional): ``sandbox_fusion_url``/``sandbox_url`` (default: environment, else
            embedded), ``score_mode`` (``"binary"`` default, or ``"pass_rate"``), ``language``,
            ``extract_policy`` (``"last"``/``"first"``), ``stop_on_first_failure`` (binary mode
            only; default True), ``total_timeout`` (seconds for the whole call, default 600),
            ``memory_limit_mb`` (MiB) and ``run_timeout`` (seconds per test) overriding the spec,
            ``concurrent_semaphore`` (held while the sandbox runs this submission),
            ``infra_score`` (score reported when the verdict is unknown, default 0.0; check
            ``infra_error``).

    Returns:
        a dict with exactly :data:`SCORE_KEYS`: ``score`` (float), ``acc`` (bool), ``pass_rate``
        (float or ``None`` when unknown), ``n_passed``, ``n_total`` (every test counts),
        ``verdict`` (a :class:`Verdict` value) and ``infra_error`` (True when the sandbox failed or
        the test data is bad: the score then carries no information and should be masked; the
        reason is logged as a warning on the ``judgebox.reward`` logger, once per distinct message)
        and ``unscorable_reason`` (``"infrastructure"`` or ``"test_data"`` when ``infra_error``, else
        ``None``: which failed, the sandbox or the dataset). Every result has every key, as verl's
        ``reward_extra_info`` needs.
    """
    extra_info = extra_info or {}
    language = kwargs.get("language") or extra_info.get("language") or "python"
    binary = kwargs.get("score_mode", "binary") != "pass_rate"
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
        return _score(Judgement(verdict=Verdict.test_data_error, message=str(exc)), binary, kwargs)
    code = extract_code(solution_str or "", spec.language, kwargs.get("extract_policy", "last"))
    try:
        client = client_for(kwargs.get("sandbox_fusion_url") or kwargs.get("sandbox_url"))
    except SandboxUnavailable as exc:  # a dead URL is the sandbox's failure, told in seconds
        return _score(Judgement(verdict=Verdict.infra_error, n_total=spec.n_tests, message=str(exc)), binary, kwargs)
    stop = binary and kwargs.get("stop_on_first_failure", True)
    future = _pool.submit(_judge_gated, kwargs.get("concurrent_semaphore"), spec, code, client, stop)
    try:
        j = future.result(timeout=float(kwargs.get("total_timeout", 600)))
    except concurrent.futures.TimeoutError:
        j = Judgement(verdict=Verdict.infra_error, n_total=spec.n_tests, message="total_timeout exceeded")
    return _score(j, binary, kwargs)


def _judge_gated(gate: Optional[threading.Semaphore], spec: TestSpec, code: str, client: SandboxClient,
                 stop: bool) -> Judgement:
    if gate is None:
        return judge(spec, code, client=client, stop_on_first_failure=stop)
    with gate:
        return judge(spec, code, client=client, stop_on_first_failure=stop)


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
            "unscorable_reason": unscorable_reason(j.verdict)}
