"""``OpenAIBackend``: an OpenAI-compatible server (``vllm serve``, SGLang) fed token ids.

Each request is ``POST {base_url}/v1/completions`` with ``prompt`` = the token ids (vLLM and SGLang
accept a list of ints), ``logprobs`` = 1 and ``return_tokens_as_token_ids`` so every generated
token comes back as ``"token_id:N"`` (vLLM's format) with its logprob; ``return_token_ids`` asks
newer vLLM for the ids directly. No text is re-tokenized. The finish reason is the server's
``finish_reason`` for a completion (token-level: ``stop``/``length``; ``abort`` on error).

Several base URLs: each trajectory (``request_id``) goes to the replica with the fewest requests
in flight when it first asks, then stays there (its prefix stays in that replica's cache).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Optional, Sequence

import httpx
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from judgebox.agent.backends.base import EngineInfo, GenerationResult, LogprobsMode, finish_of

#: Keys of the backend dict sent under another name (or not at all) in the request body.
RENAMED = {"logprobs": None, "structured_outputs": "structured_outputs"}


class Router:
    """Least-in-flight choice of a replica, sticky per trajectory (the last ``remember`` ones)."""

    def __init__(self, n: int, remember: int = 100_000) -> None:
        self.in_flight = [0] * n
        self.sticky: OrderedDict[str, int] = OrderedDict()
        self.remember = remember

    def pick(self, key: Optional[str]) -> int:
        """The replica for trajectory ``key`` (``None``: the least loaded, not remembered)."""
        if key is not None and key in self.sticky:
            self.sticky.move_to_end(key)
            return self.sticky[key]
        index = min(range(len(self.in_flight)), key=self.in_flight.__getitem__)
        if key is not None:
            self.sticky[key] = index
            if len(self.sticky) > self.remember:
                self.sticky.popitem(last=False)
        return index


class OpenAIBackend:
    """Generation through ``/v1/completions`` of one or more OpenAI-compatible servers.

    Args:
        base_urls: server roots (``http://host:8000``; a trailing ``/v1`` is accepted).
        model: the served model name.
        timeout_s: seconds per HTTP request.
        retries: extra attempts on a connection error (not on an HTTP error status).
        api_key: sent as a bearer token when given.
        logprobs_mode: what the servers' logprobs are (vLLM's ``--logprobs-mode``, which the API does
            not report): recorded on every trajectory; ``None`` records ``unknown`` (vLLM's default is
            ``raw_logprobs``: start it with ``--logprobs-mode processed_logprobs`` for the sampling
            distribution's, BUG-221).

    Raises:
        ValueError: no base URL.
    """

    def __init__(self, base_urls: Sequence[str], model: str, *, timeout_s: float = 600.0, retries: int = 2,
                 api_key: Optional[str] = None, logprobs_mode: Optional[LogprobsMode] = None) -> None:
        if not base_urls:
            raise ValueError("OpenAIBackend needs at least one base URL (--base-url)")
        self.urls = [u.rstrip("/").removesuffix("/v1") + "/v1/completions" for u in base_urls]
        self.model = model
        self.logprobs_mode = logprobs_mode
        self.router = Router(len(self.urls))
        self.retries = retries
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.AsyncClient(timeout=timeout_s, headers=headers)

    async def engine_info(self) -> EngineInfo:
        """The served model's ``max_model_len`` from the first server's ``GET /v1/models`` (vLLM's
        model card carries it); ``None`` when the server does not say or cannot be asked."""
        url = self.urls[0].removesuffix("/completions") + "/models"
        limit = None
        try:
            response = await self.client.get(url)
            response.raise_for_status()
            cards = response.json().get("data") or []
            card = next((c for c in cards if c.get("id") == self.model), cards[0] if len(cards) == 1 else None)
            limit = card.get("max_model_len") if card else None
        except (httpx.HTTPError, ValueError, AttributeError):
            limit = None
        return EngineInfo(limit if isinstance(limit, int) else None, self.logprobs_mode, f"GET {url}")

    def body(self, prompt_ids: list[int], params: dict) -> dict:
        """The JSON body of one request."""
        body = {k: v for k, v in params.items() if k not in RENAMED and v is not None}
        body.update(model=self.model, prompt=list(prompt_ids), logprobs=1, return_tokens_as_token_ids=True,
                    return_token_ids=True, skip_special_tokens=False, include_stop_str_in_output=True)
        if params.get("structured_outputs"):
            body["structured_outputs"] = params["structured_outputs"]
        return body

    async def generate(self, prompt_ids: list[int], sampling_params: dict,
                       request_id: Optional[str] = None) -> GenerationResult:
        """POST one completion request to the trajectory's replica.

        Raises:
            httpx.HTTPStatusError: the server answered an error status (e.g. 400 for a bad request).
            httpx.TransportError: the server could not be reached after the retries.
        """
        index = self.router.pick(request_id)
        self.router.in_flight[index] += 1
        try:
            async for attempt in AsyncRetrying(stop=stop_after_attempt(self.retries + 1), reraise=True,
                                               wait=wait_exponential(multiplier=0.5, max=5),
                                               retry=retry_if_exception_type(httpx.TransportError)):
                with attempt:
                    try:
                        response = await self.client.post(self.urls[index], json=self.body(prompt_ids, sampling_params))
                    except httpx.TransportError as exc:  # httpx's words name no server: "All connection attempts failed"
                        raise type(exc)(f"{self.urls[index]}: {exc}", request=exc.request) from exc
            response.raise_for_status()
        finally:
            self.router.in_flight[index] -= 1
        choice = response.json()["choices"][0]
        lp = choice.get("logprobs") or {}
        tokens = lp.get("tokens") or []
        ids = choice.get("token_ids") or [int(t.split(":", 1)[1]) for t in tokens if t.startswith("token_id:")]
        logprobs = lp.get("token_logprobs")
        if sampling_params.get("logprobs") is None or logprobs is None:
            logprobs = None  # a length that differs from the ids' is the loop's to refuse (BUG-223)
        return GenerationResult(list(ids), logprobs, finish_of(choice.get("finish_reason")))

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.aclose()
