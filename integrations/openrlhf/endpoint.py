"""OpenRLHF integration: ``POST /get_reward``, OpenRLHF's remote reward protocol (``--remote_rm_url``).

Protocol (source: OpenRLHF 0.11 ``openrlhf/utils/agent.py`` ``SingleTurnAgentExecutor`` client and
``openrlhf/cli/serve_rm.py`` server): the trainer POSTs ``{"query": [...], "prompts": [...],
"labels": [...]}``, three parallel lists (``query`` is the decoded prompt + response text, special
tokens kept; ``prompts`` the prompt text; ``labels`` the dataset's ``label_key`` column) and reads
``{"rewards": [...], "scores": [...], "extra_logs": {name: [...]}}``, lists parallel to ``query``
(OpenRLHF turns each ``extra_logs`` value into a logged metric).

Here each label carries the problem's tests in any ``compute_score`` ground-truth form (a TestSpec
JSON, verl/APPS ``in_outs``, open-r1 ``verification_info``; dict or JSON text). The completion is the
query with its prompt prefix removed (the whole query when it does not start with the prompt); its
code is extracted as :func:`judgebox.integrations.verl.reward.compute_score` does.

A verdict is never guessed: a label whose tests are unusable answers HTTP 422 naming
``labels[i]`` and the reason; a sandbox failure answers HTTP 503 (OpenRLHF's client retries 5 times),
so neither becomes a reward of 0.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from judgebox.reward.batch import score_batch
from judgebox.reward.extract import extract_code
from judgebox.reward.spec import TestDataError, TestSpec
from judgebox.reward.verdict import Verdict
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


def completion_of(query: str, prompt: Optional[str]) -> str:
    """The response part of ``query``: the text after ``prompt`` when ``query`` starts with it."""
    return query[len(prompt):] if prompt and query.startswith(prompt) else query


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
        codes = [extract_code(completion_of(q, p), s.language) for q, p, s in zip(request.query, prompts, specs)]
        judgements = await score_batch(specs, codes, client=client, concurrency=concurrency)
        for i, j in enumerate(judgements):
            if j.verdict == Verdict.test_data_error:
                return _error(422, f"labels[{i}]: {j.message}")
            if j.verdict == Verdict.infra_error:
                return _error(503, f"query[{i}]: the sandbox could not judge it ({j.message}); retry")
        binary = request.score_mode == "binary"
        rewards = [(1.0 if j.passed else 0.0) if binary else float(j.pass_rate or 0.0) for j in judgements]
        return {"rewards": rewards, "scores": rewards, "extra_logs": {
            "pass_rate": [float(j.pass_rate or 0.0) for j in judgements],
            "accepted": [float(j.passed) for j in judgements],
            "n_tests": [float(j.n_total) for j in judgements],
        }}

    return router


def _error(status: int, detail: str) -> JSONResponse:
    headers = {"Retry-After": "1"} if status == 503 else None
    return JSONResponse(status_code=status, content={"detail": detail}, headers=headers)
