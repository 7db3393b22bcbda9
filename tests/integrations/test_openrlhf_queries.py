"""BUG-209: OpenRLHF decodes sequences with their special tokens, so ``/get_reward`` queries carry
left padding before the prompt and pads after the response; the response is still found, per row,
and a query that does not hold its prompt gets no reward (``null`` and the reason), never a guess."""

from __future__ import annotations

import json

import httpx

P = ("<|im_start|>user\nRead n, print n+1. Example:\n```python\nprint('example')\n```<|im_end|>\n"
     "<|im_start|>assistant\n")
R1 = "```python\nprint(int(input())+1)\n```"
R2 = "I would print the example."
SPEC = json.dumps({"kind": "stdio", "stdio": [{"stdin": "1\n", "expected": "2\n"}]})
PADDED = "<|endoftext|><|endoftext|>" + P + R1 + "<|im_end|>" + "<|endoftext|>" * 3


def get_reward(url: str, query: list[str], prompts: list[str]) -> dict:
    r = httpx.post(f"{url}/get_reward", json={"query": query, "prompts": prompts, "labels": [SPEC] * len(query)},
                   timeout=120)
    assert r.status_code == 200, r.text
    return r.json()


def test_padded_queries_are_scored_on_their_own_response(live_server):
    """Row 2 is 0: the prompt's example block is never taken for the response's code."""
    reply = get_reward(live_server, [PADDED, P + R2 + "<|im_end|>"], [P, P])
    assert (reply["rewards"], reply["scores"]) == ([1.0, 0.0], [1.0, 0.0])
    assert "error" not in reply["extra_logs"]
    swapped = get_reward(live_server, [P + R2 + "<|im_end|>", PADDED], [P, P])
    assert swapped["rewards"] == [0.0, 1.0]


def test_a_query_without_its_prompt_gets_no_reward_and_says_why(live_server):
    """Before, the whole query was scored as the response (1.0 here, a guess)."""
    reply = get_reward(live_server, ["<|im_start|>user\nsomething else<|im_end|>\n" + R1, PADDED],
                       [P, P])
    assert reply["rewards"] == [None, 1.0] and reply["scores"] == [None, 1.0]
    assert reply["extra_logs"]["error"][0].startswith("query[0]: the query does not hold its prompt")
    assert reply["extra_logs"]["error"][1] is None
    # text other than special tokens before the prompt is not padding
    assert get_reward(live_server, ["Note: " + P + R1], [P])["rewards"] == [None]
