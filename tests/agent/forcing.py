"""``ForcedTokens``: a vLLM logits processor that makes a request emit exactly given token ids.

A random model never calls tools, and a structured-output grammar (xgrammar ``choice``) fixes the
*text* but not its tokenization: a random model may spell it with other tokens, or walk into a
dead end when ``allowed_token_ids`` narrows the vocabulary. For exact ids, the session engine is
built with this processor (``logits_processors=[ForcedTokens]``, vLLM's v1 per-request adapter);
a request whose ``SamplingParams.extra_args`` has ``forced_token_ids`` gets every logit but the
next forced id set to ``-inf`` until the list is used up (then it samples freely). The engine's own
stop and length handling is untouched: a forced end-of-turn id stops the request (``stop``), a
``max_tokens`` reached first cuts it (``length``).
"""

from __future__ import annotations

from typing import Optional

import torch
from vllm.v1.sample.logits_processor import AdapterLogitsProcessor


class ForcedTokens(AdapterLogitsProcessor):
    """Per request: ``extra_args["forced_token_ids"]`` are generated in order."""

    def is_argmax_invariant(self) -> bool:
        return False

    def new_req_logits_processor(self, params) -> Optional[object]:
        forced = (params.extra_args or {}).get("forced_token_ids")
        if not forced:
            return None
        forced = list(forced)

        def force(output_ids: list[int], logits: torch.Tensor) -> torch.Tensor:
            step = len(output_ids)
            if step >= len(forced):
                return logits
            keep = logits[forced[step]].clone()
            logits.fill_(float("-inf"))
            logits[forced[step]] = keep if torch.isfinite(keep) else 0.0
            return logits

        return force
