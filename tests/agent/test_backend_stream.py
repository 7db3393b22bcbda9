"""BUG-223: an OpenAI-compatible server whose token stream is inconsistent. A scripted fake server
(loopback HTTP, our own) answers ``/v1/completions``: a stop id the server matched but left out of the
ids is restored (mask 0) and counted, for a middle turn and for the last; ids and logprobs of
different lengths end the trajectory as ``logprob_length_mismatch``, never padded or shifted; vLLM's
``token_id:N`` strings are read as ids."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import threading
from typing import Iterator

from judgebox.agent.backends.openai import OpenAIBackend
from judgebox.agent.config import AgentLoopConfig
from judgebox.agent.loop import ToolAgentLoop
from tests.agent.loop_helpers import code_interpreter
from tests.agent.qwen_fixtures import qwen_tokenizer

IM_END = 151645


@contextlib.contextmanager
def fake_server(choices: list[dict]) -> Iterator[str]:
    """A ``/v1/completions`` server answering ``choices`` in order (one per request)."""
    queue = list(choices)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.dumps({"choices": [queue.pop(0)]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def choice(ids: list[int], logprobs: list[float], finish: str = "stop", **extra) -> dict:
    return {"token_ids": ids, "finish_reason": finish,
            "logprobs": {"tokens": [f"token_id:{i}" for i in ids], "token_logprobs": logprobs}, **extra}


def run(url: str):
    tokenizer = qwen_tokenizer()
    loop = ToolAgentLoop(AgentLoopConfig(format="hermes", max_tokens_per_turn=64), tokenizer,
                         OpenAIBackend([url], "fake"), tools=(code_interpreter,),
                         score_fn=lambda text, gt, **info: {"score": 1.0})
    return asyncio.run(loop.run([{"role": "user", "content": "6*7?"}], logprobs=0)), tokenizer


def test_a_stop_id_the_server_dropped_is_restored_and_counted():
    tokenizer = qwen_tokenizer()
    call = tokenizer.encode('<tool_call>\n{"name": "code_interpreter", "arguments": {"code": "print(6*7)"}}\n'
                            "</tool_call>", add_special_tokens=False)
    answer = tokenizer.encode("It is 42.", add_special_tokens=False)
    with fake_server([choice(call, [-0.1] * len(call), matched_stop=IM_END),
                      choice(answer, [-0.2] * len(answer), matched_stop=IM_END)]) as url:
        out, _ = run(url)
    assert out.extra_fields["stop_reason"] == "completed"
    assert out.extra_fields["stop_token_restored"] == 2  # turn 1 and the last turn
    n = len(call)
    assert out.response_ids[n] == IM_END and out.response_mask[n] == 0  # one <|im_end|> closes turn 1
    assert out.response_ids[-1] == IM_END and out.response_mask[-1] == 0
    assert out.response_ids.count(IM_END) == 3  # turn 1, the tool turn, the last turn
    assert len(out.response_ids) == len(out.response_mask) == len(out.response_logprobs)


def test_ids_and_logprobs_of_different_lengths_end_the_trajectory_by_name():
    with fake_server([{"token_ids": [40, 41, 42, 43, IM_END], "finish_reason": "stop",
                       "logprobs": {"tokens": ["token_id:40", "token_id:41", "x", "token_id:43"],
                                    "token_logprobs": [-0.1, -0.1, -0.1, -0.1]}}]) as url:
        out, _ = run(url)
    assert (out.extra_fields["stop_reason"], out.extra_fields["failure"]) == ("aborted", "logprob_length_mismatch")
    assert out.response_ids == [] and out.reward_score is None


def test_token_id_strings_are_read_as_ids():
    with fake_server([{"finish_reason": "stop", "logprobs": {"tokens": ["token_id:40", "token_id:151645"],
                                                             "token_logprobs": [-0.5, -0.25]}}]) as url:
        backend = OpenAIBackend([url], "fake")
        result = asyncio.run(backend.generate([1, 2], {"logprobs": 0}))
    assert (result.token_ids, result.logprobs, result.finish_reason) == ([40, IM_END], [-0.5, -0.25], "stop")
