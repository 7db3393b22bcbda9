"""Rows of a dataset from the Hugging Face hub, for a manifest whose files are not found locally.

A manifest's ``hub`` (:class:`HubSource`) names the official hub dataset whose rows have the same
fields as the local files its loader reads (``path``, the configuration ``name``, ``split`` and an
optional ``revision``). :func:`hub_rows` loads them with the ``datasets`` library (its own cache,
``HF_HOME``; ``HF_HUB_OFFLINE=1`` reads that cache only), so a user with network needs no download
step. Without network, without ``datasets``, or when the hub refuses, :class:`HubUnavailable` says
why; the caller then names the local files it looked for.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict


class HubSource(BaseModel):
    """A hub dataset: ``load_dataset(path, name, split=split, revision=revision)``."""

    model_config = ConfigDict(extra="forbid")
    path: str
    name: Optional[str] = None
    split: str = "test"
    revision: Optional[str] = None

    def __str__(self) -> str:
        return f"{self.path}{'/' + self.name if self.name else ''} (split {self.split}" + \
            (f", revision {self.revision})" if self.revision else ")")


class HubUnavailable(RuntimeError):
    """The hub dataset could not be loaded: the message says which and why."""


def hub_library() -> Any:
    """The ``datasets`` library, or ``None`` when it is not installed (a folder named ``datasets/`` on
    ``sys.path``, such as this repository's manifests, is not it)."""
    try:
        import datasets
    except ImportError:
        return None
    return datasets if hasattr(datasets, "load_dataset") else None


def hub_rows(source: HubSource) -> list[dict[str, Any]]:
    """Every row of the hub dataset ``source``, in its order.

    Raises:
        HubUnavailable: the ``datasets`` library is not installed (``pip install datasets``), the hub
            cannot be reached (and the rows are not in the local hub cache), or it refused the request.
    """
    datasets = hub_library()
    if datasets is None:
        raise HubUnavailable(f"the hub dataset {source} needs the datasets library (pip install \"judgebox[hub]\")")
    try:
        table = datasets.load_dataset(source.path, source.name, split=source.split, revision=source.revision)
    except Exception as exc:  # noqa: BLE001 - network, auth, missing split: each is the hub's answer
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise HubUnavailable(f"the hub dataset {source} could not be loaded ({type(exc).__name__}: {reason[:300]})") from None
    return [dict(row) for row in table]
