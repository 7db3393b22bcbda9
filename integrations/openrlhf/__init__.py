"""OpenRLHF: the remote reward endpoint ``POST /get_reward`` (:func:`create_router`, mounted by
``judgebox serve``, which always serves it)."""

from .endpoint import RewardRequest, create_router

__all__ = ["RewardRequest", "create_router"]
