"""``ClientSettings``: the configuration of a :class:`~judgebox.sandbox.client.client.SandboxClient` (one pydantic
settings model, read by the client and its transport)."""

from __future__ import annotations

from typing import Optional

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["ClientSettings"]


class ClientSettings(BaseSettings):
    """Configuration of a :class:`SandboxClient`, from arguments or the environment.

    Environment: ``JUDGEBOX_SANDBOX_URL`` (comma-separated base URLs) or, as the official
    ``sandbox_fusion`` client, ``SANDBOX_FUSION_ENDPOINT`` (one URL); every other field is
    ``JUDGEBOX_CLIENT_<FIELD>`` (e.g. ``JUDGEBOX_CLIENT_MAX_CONCURRENCY=64``).
    Units: seconds for every time.
    """

    model_config = SettingsConfigDict(env_prefix="JUDGEBOX_CLIENT_", extra="forbid",
                                      populate_by_name=True)

    sandbox_url: Optional[str] = Field(
        None, validation_alias=AliasChoices("sandbox_url", "JUDGEBOX_SANDBOX_URL", "SANDBOX_FUSION_ENDPOINT"),
        description="comma-separated base URLs; empty = embedded LocalSandbox")
    max_concurrency: int = Field(32, ge=1, description="requests in flight per client (and pool size)")
    max_attempts: int = Field(5, ge=1, description="HTTP attempts per call, the first included")
    deadline: Optional[float] = Field(
        None, gt=0, description="seconds one call may take with its retries; "
                                "default 2 x the request's HTTP timeout + 60")
    timeout_margin: float = Field(
        30.0, ge=0, description="seconds added to the request's own timeouts for queueing and transfer")
    connect_timeout: float = Field(5.0, gt=0, description="seconds to open a TCP connection")
    backoff_initial: float = Field(0.5, ge=0, description="seconds before the first retry (then x2)")
    backoff_max: float = Field(10.0, ge=0, description="largest backoff in seconds")
    backoff_jitter: float = Field(0.5, ge=0, description="seconds of random jitter added to a backoff")
    failure_threshold: int = Field(3, ge=1, description="consecutive failures that take an endpoint out")
    cooldown: float = Field(10.0, gt=0, description="seconds an endpoint stays out before a ping probe")
    ping_timeout: float = Field(2.0, gt=0, description="seconds a /v1/ping probe may take")
    batch_max_items: int = Field(64, ge=1, description="requests per POST /run_tests_batch: run_tests_batch "
                                 "sends larger lists as several batches (keep it <= the server's max_batch_items)")
    batch_max_bytes: int = Field(16 << 20, ge=1024, description="JSON bytes per POST /run_tests_batch (keep it <= "
                                 "the server's max_batch_bytes); a request larger alone goes by POST /run_tests")

    def urls(self) -> list[str]:
        """``sandbox_url`` split on commas, blanks dropped."""
        return [u.strip() for u in (self.sandbox_url or "").split(",") if u.strip()]
