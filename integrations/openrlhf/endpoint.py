"""OpenRLHF integration: ``POST /get_reward``, OpenRLHF's remote reward protocol (``--remote_rm_url``).

Protocol (source: OpenRLHF 0.11 ``openrlhf/utils/agent.py`` ``SingleTurnAgentExecutor`` client and
``openrlhf/cli/serve_rm.py`` server): the trainer POSTs ``{"query": [...], "prompts": [...],
"labels": [...]}``, three parallel lists (``query`` is the decoded prompt + response text, special
tokens kept; ``prompts`` the prompt text; ``labels`` the dataset's ``label_key`` column) and reads
``{"rewards": [...], "scores": [...], "extra_logs": {name: [...]}}``, lists parallel to ``query``
(OpenRLHF turns each ``extra_logs`` value into a logged metric).

Here each label carries the problem's tests in any ``compute_score`` ground-truth form (a TestSpec
JSON, verl/APPS ``in_outs``, open-r1 ``verification_info``; dict or JSON text). The completion is
what follows the prompt in the query (:func:`completion_of`): OpenRLHF decodes with
``skip_special_tokens=False``, so a query may carry padding tokens before the prompt (left padding)
and after the response; only such tokens may stand before it. Its code is extracted as
:func:`judgebox.integrations.verl.reward.compute_score` does. Without ``prompts`` the whole query is
the completion.

A verdict is never guessed: a label whose tests are unusable answers HTTP 422 naming
``labels[i]`` and the reason; a sandbox failure answers HTTP 503 (OpenRLHF's client retries 5 times),
so neither becomes a reward of 0; a query that does not hold its prompt (BUG-209) gets reward
``null`` for that row and its reason in ``extra_logs["error"]``, never a score of a guessed span.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Optional

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from judgebox.reward.batch import score_batch
from judgebox.reward.extract import extract_code
from judgebox.reward.spec import TestDataError, TestSpec
from judgebox.reward.verdict import Judgement, Verdict
from judgebox.sandbox.client.client import SandboxClient


class RewardRequest(BaseModel):
    """The body OpenRLHF sends (``queries`` is accepted for ``query``)."""

    model_config = ConfigDict(extra="ignore")
    query: list[str] = Field(validation_alias=AliasChoices("query", "queries"),
                             description="prompt + response text, one per sample")
    prompts: Optional[list[str]] = Field(None, description="prompt text, parallel to query")
    labels: list[Any] = Field(description="each sample's tests (TestSpec JSON, in_outs or verification_info)")
    score_mode: Literal["binary", "pass_rate"] = Field(
        "binary", description="reward 1/0 for all tests passed (default), or the fraction passed")

    @model_validator(mode="after")
    def _same_lengths(self) -> "RewardRequest":
        for name, values in (("prompts", self.prompts), ("labels", self.labels)):
            if values is not None and len(values) != len(self.query):
                raise ValueError(f"{name}: {len(values)} entries for {len(self.query)} queries; "
                                 "send one per query")
        return self


#: Special-token text a decoded sequence may carry around its prompt and response: ``<|...|>``
#: (Qwen, GPT), ``<pad>``, ``<s>``, ``</s>``, ``<unk>``, ``<eos>``, ``<bos>``, and whitespace.
_SPECIAL = r"(?:<\|[^|<>\s]{1,64}\|>|</?s>|<pad>|<unk>|<eos>|<bos>|\s)"
_PADDING = re.compile(rf"{_SPECIAL}*\Z")
_TRAILING = re.compile(rf"{_SPECIAL}+\Z")


class PromptNotInQuery(ValueError):
    """The query does not hold its prompt after padding: its response cannot be told (no guess)."""


def completion_of(query: str, prompt: Optional[str]) -> str:
    """The response part of ``query``: the text after ``prompt``, where only special tokens (padding)
    may stand before the prompt; trailing special tokens are dropped. Without a prompt, the query.

    Raises:
        PromptNotInQuery: ``prompt`` is not in ``query`` behind padding only.
    """
    if not prompt:
        return query
    at = query.find(prompt)
    while at >= 0 and not _PADDING.match(query[:at]):
        at = query.find(prompt, at + 1)
    if at < 0:
        raise PromptNotInQuery("the query does not hold its prompt (after padding tokens): its response "
                               "cannot be told apart; send the decoded prompt + response")
    return _TRAILING.sub("", query[at + len(prompt):])


def create_router(client: Optional[SandboxClient] = None, *, concurrency: int = 16) -> APIRouter:
    """An ``APIRouter`` with ``POST /get_reward`` judging through ``client`` (default: the process-wide
    one) with at most ``concurrency`` submissions at once."""
    router = APIRouter()

    @router.post("/get_reward")
    async def get_reward(request: RewardRequest):
        specs = []
        for i, label in enumerate(request.labels):
            try:
                specs.append(TestSpec.from_ground_truth(label))
            except TestDataError as exc:
                return _error(422, f"labels[{i}]: {exc}; give the tests as a TestSpec, in_outs or "
                                   "verification_info (dict or JSON text)")
        prompts = request.prompts or [None] * len(request.query)
        errors: list[Optional[str]] = [None] * len(request.query)
        codes: list[str] = []
        for i, (q, p, s) in enumerate(zip(request.query, prompts, specs)):
            try:
                codes.append(extract_code(completion_of(q, p), s.language))
            except PromptNotInQuery as exc:
                errors[i] = f"query[{i}]: {exc}"
                codes.append("")
        ok = [i for i, e in enumerate(errors) if e is None]
        scored = await score_batch([specs[i] for i in ok], [codes[i] for i in ok], client=client,
                                   concurrency=concurrency)
        judgements: list[Optional[Judgement]] = [None] * len(request.query)
        for i, j in zip(ok, scored):
            judgements[i] = j
        for i, j in ((i, j) for i, j in enumerate(judgements) if j is not None):
            if j.verdict == Verdict.test_data_error:
                return _error(422, f"labels[{i}]: {j.message}")
            if j.verdict == Verdict.infra_error:
                return _error(503, f"query[{i}]: the sandbox could not judge it ({j.message}); retry")
        binary = request.score_mode == "binary"
        rewards = [None if j is None else (1.0 if j.passed else 0.0) if binary else float(j.pass_rate or 0.0)
                   for j in judgements]
        logs: dict[str, list] = {
            "pass_rate": [None if j is None else float(j.pass_rate or 0.0) for j in judgements],
            "accepted": [None if j is None else float(j.passed) for j in judgements],
            "n_tests": [None if j is None else float(j.n_total) for j in judgements],
        }
        if any(errors):
            logs["error"] = errors
        return {"rewards": rewards, "scores": rewards, "extra_logs": logs}

    return router


def _error(status: int, detail: str) -> JSONResponse:
    headers = {"Retry-After": "1"} if status == 503 else None
    return JSONResponse(status_code=status, content={"detail": detail}, headers=headers)
