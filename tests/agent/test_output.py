"""The trajectory record and collate (judgebox.agent.output): BUG-115 (observation tokens stay in attention)
with exact tensors, the padding verl's agent loop post-processing produces, and a real forward pass
of a tiny Qwen3 that recomputes the rollout's logprobs from collate's tensors."""

from __future__ import annotations

import pydantic
import pytest

torch = pytest.importorskip("torch")

from judgebox.agent import AgentLoopOutput, collate  # noqa: E402
from tests.agent.qwen_fixtures import qwen_tokenizer, tiny_qwen3  # noqa: E402

PAD = 151643  # Qwen3's pad token <|endoftext|>


def record(prompt, segments, *, reward=None, logprobs=None, stop_reason="completed"):
    """A scripted record: ``segments`` is a list of ``(ids, mask_value)`` after the prompt."""
    ids = [t for seg, _ in segments for t in seg]
    mask = [m for seg, m in segments for _ in seg]
    return AgentLoopOutput(
        prompt_ids=prompt, response_ids=ids, response_mask=mask, response_logprobs=logprobs, reward_score=reward,
        num_turns=3, extra_fields={"stop_reason": stop_reason, "tool_calls": 1, "tool_errors": 0, "tool_timeouts": 0,
                                   "parse_errors": 0, "reward_info": {}},
    )


# --- BUG-115: tool tokens are never dropped from the attention mask ---------------------------

def test_bug115_observation_tokens_stay_in_attention():
    P, A1, OBS, A2 = [151644, 872, 198], [11, 12], [151665, 22, 151666], [13, 151645]
    batch = collate([record(P, [(A1, 1), (OBS, 0), (A2, 1)], reward=1.0)], pad_token_id=PAD)
    assert batch["attention_mask"].tolist() == [[1] * 10]
    assert batch["response_mask"].tolist() == [[1, 1, 0, 0, 0, 1, 1]]
    assert batch["position_ids"].tolist() == [list(range(10))]
    assert batch["input_ids"].tolist() == [P + A1 + OBS + A2]
    assert batch["token_level_scores"].tolist() == [[0, 0, 0, 0, 0, 0, 1.0]]


def test_bug114_reward_sits_at_the_last_of_41_response_tokens():
    # A0 (8), obs (10), A1 (8), obs (10), A2 (5 ending in EOS), response_length 64: nothing is cut
    turns = [([1] * 8, 1), ([2] * 10, 0), ([3] * 8, 1), ([4] * 10, 0), ([5] * 4 + [151645], 1)]
    batch = collate([record([7, 8], turns, reward=0.5)], pad_token_id=PAD, response_length=64)
    assert batch["response_mask"][0].sum().item() == 21
    assert batch["responses"][0, 40].item() == 151645
    assert batch["token_level_scores"][0].nonzero().flatten().tolist() == [40]
    assert batch["token_level_scores"][0, 40].item() == 0.5
    assert batch["attention_mask"][0, 2:].tolist() == [1] * 41 + [0] * 23


def test_padding_matches_verls_agent_loop_postprocess():
    # verl 0.9.1 _agent_loop_postprocess: prompt left-padded, response right-padded (pad id), mask
    # and logprobs right-padded with 0, position_ids = clip(cumsum(attention_mask) - 1, 0),
    # rm_scores[i, response_length_i - 1] = score
    a = record([5, 6], [([7], 1), ([8, 9], 0), ([10], 1)], reward=1.0, logprobs=[-0.5, 0.0, 0.0, -0.25])
    b = record([1, 2, 3, 4], [([11, 12], 1)], reward=-1.0, logprobs=[-1.0, -2.0])
    batch = collate([a, b], pad_token_id=0, prompt_length=5, response_length=6)
    assert batch["prompts"].tolist() == [[0, 0, 0, 5, 6], [0, 1, 2, 3, 4]]
    assert batch["responses"].tolist() == [[7, 8, 9, 10, 0, 0], [11, 12, 0, 0, 0, 0]]
    assert batch["input_ids"].tolist() == [[0, 0, 0, 5, 6, 7, 8, 9, 10, 0, 0], [0, 1, 2, 3, 4, 11, 12, 0, 0, 0, 0]]
    assert batch["attention_mask"].tolist() == [[0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0], [0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]]
    assert batch["position_ids"].tolist() == [[0, 0, 0, 0, 1, 2, 3, 4, 5, 5, 5], [0, 0, 1, 2, 3, 4, 5, 5, 5, 5, 5]]
    assert batch["response_mask"].tolist() == [[1, 0, 0, 1, 0, 0], [1, 1, 0, 0, 0, 0]]
    assert batch["token_level_scores"].tolist() == [[0, 0, 0, 1.0, 0, 0], [0, -1.0, 0, 0, 0, 0]]
    assert batch["rollout_log_probs"].tolist() == [[-0.5, 0, 0, -0.25, 0, 0], [-1.0, -2.0, 0, 0, 0, 0]]
    assert {k: v.dtype for k, v in batch.items()} == {
        **dict.fromkeys(["prompts", "responses", "input_ids", "attention_mask", "position_ids", "response_mask"], torch.int64),
        "token_level_scores": torch.float32, "score_valid": torch.int64, "rollout_log_probs": torch.float32}
    assert batch["score_valid"].tolist() == [1, 1]


def test_unscored_batch_has_no_scores_and_records_round_trip_as_dicts():
    r = record([1], [([2], 1)])
    batch = collate([r.model_dump()], pad_token_id=0)
    assert set(batch) == {"prompts", "responses", "input_ids", "attention_mask", "position_ids", "response_mask"}


@pytest.mark.parametrize("records,kwargs,message", [
    ([], {}, "at least one record"),
    ([record([1, 2, 3], [([4], 1)])], {"prompt_length": 2}, r"prompt_ids of records \[0\] is longer than prompt_length=2"),
    ([record([1], [([4, 5], 1)])], {"response_length": 1}, r"response_ids of records \[0\] is longer than response_length=1"),
    ([record([1], [([4], 1)], logprobs=[-1.0]), record([1], [([4], 1)])], {}, r"response_logprobs is None in records \[1\]"),
    ([record([1], [], reward=1.0)], {}, r"records \[0\] have a reward_score but no policy token"),
    ([record([1], [([4, 5], 0)], reward=1.0)], {}, r"records \[0\] have a reward_score but no policy token"),
])
def test_collate_refuses_what_it_would_have_to_guess(records, kwargs, message):
    with pytest.raises(ValueError, match=message):
        collate(records, pad_token_id=0, **kwargs)


def test_bug222_the_reward_sits_on_the_last_policy_token_not_a_trailing_observation():
    """(a) A trajectory cut after a truncated observation (``context_exhausted``): the reward goes to
    the last token the policy generated (index 1), not the observation's last (index 4), where a
    discount would shrink it and gamma = 0 would lose it."""
    r = record([1, 2, 3], [([11, 12], 1), ([21, 22, 23], 0)], reward=1.0, stop_reason="context_exhausted")
    batch = collate([r], pad_token_id=0)
    assert batch["response_mask"].tolist() == [[1, 1, 0, 0, 0]]
    assert batch["token_level_scores"].tolist() == [[0, 1.0, 0, 0, 0]]
    # (b) two turns around an observation, ending in EOS: the reward at index 11, 9 policy tokens
    r = record([1], [([5] * 4, 1), ([6] * 3, 0), ([7] * 4 + [151645], 1)], reward=1.0)
    batch = collate([r], pad_token_id=0)
    assert batch["token_level_scores"][0].nonzero().flatten().tolist() == [11]
    assert batch["response_mask"].sum().item() == 9


def test_bug205_an_unscorable_record_is_flagged_never_a_scored_zero():
    """Rewards [1.0, None (sandbox unavailable), 0.0, 1.0]: the batch keeps all four, and
    ``score_valid`` says which rows hold a reward; the unscorable row's scores are not a 0.0 that
    counts (it was a ValueError for the whole batch)."""
    rows = [record([1], [([2, 3], 1)], reward=v) for v in (1.0, None, 0.0, 1.0)]
    batch = collate(rows, pad_token_id=0)
    assert batch["score_valid"].tolist() == [1, 0, 1, 1]
    assert batch["token_level_scores"].tolist() == [[0, 1.0], [0, 0], [0, 0], [0, 1.0]]
    none = collate([record([1], [([2], 1)]), record([1], [([2], 1)])], pad_token_id=0)
    assert "token_level_scores" not in none and "score_valid" not in none


def test_collate_names_a_missing_pad_token():
    with pytest.raises(ValueError, match="pad_token_id must be an int, got None; .*eos_token_id"):
        collate([record([1], [([2], 1)])], pad_token_id=None)


@pytest.mark.parametrize("change,message", [
    ({"response_mask": [1]}, "response_mask has 1 entries, response_ids 2"),
    ({"response_logprobs": [0.0]}, "response_logprobs has 1 entries, response_ids 2"),
    ({"response_mask": [1, 2]}, "response_mask values must be 0"),
    ({"extra_fields": {"stop_reason": "completed"}}, "extra_fields is missing tool_calls, tool_errors"),
    ({"extra_fields": {"stop_reason": "done", "tool_calls": 0, "tool_errors": 0, "tool_timeouts": 0,
                       "parse_errors": 0, "reward_info": {}}}, "stop_reason'] must be one of completed, length"),
    ({"status": "completed"}, "status"),
])
def test_record_validation_names_the_field(change, message):
    fields = record([1], [([2], 1), ([3], 0)]).model_dump() | change
    with pytest.raises(pydantic.ValidationError, match=message):
        AgentLoopOutput(**fields)


# --- a real forward pass over collate's tensors ------------------------------------------------

@torch.no_grad()
def rollout(model, prompt, segments, generator):
    """Generate like an engine (KV cache, one token at a time, sampled logprobs recorded);
    ``segments`` alternates ("gen", n) turns and ("obs", ids) observations."""
    out = model(torch.tensor([prompt]), use_cache=True)
    cache, logits = out.past_key_values, out.logits[0, -1]
    ids, mask, logprobs = [], [], []

    def feed(new):
        nonlocal cache, logits
        out = model(torch.tensor([new]), past_key_values=cache, use_cache=True)
        cache, logits = out.past_key_values, out.logits[0, -1]

    for kind, value in segments:
        if kind == "obs":
            ids += value
            mask += [0] * len(value)
            logprobs += [0.0] * len(value)
            feed(value)
            continue
        for _ in range(value):
            logp = torch.log_softmax(logits.float(), dim=-1)
            token = torch.multinomial(logp.exp(), 1, generator=generator).item()
            ids.append(token)
            mask.append(1)
            logprobs.append(logp[token].item())
            feed([token])
    return record(prompt, [(ids, 1)], reward=1.0, logprobs=logprobs).model_copy(update={"response_mask": mask})


@torch.no_grad()
def recompute_logprobs(model, batch, attention_mask=None):
    """The trainer's recomputation: one padded forward, logprob of each response token."""
    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"] if attention_mask is None else attention_mask,
                position_ids=batch["position_ids"])
    P = batch["prompts"].shape[1]
    logits = out.logits[:, P - 1:-1].float()
    return torch.log_softmax(logits, dim=-1).gather(-1, batch["responses"].unsqueeze(-1)).squeeze(-1)


@pytest.mark.slow
def test_bug115_recomputed_logprobs_match_the_rollout_and_use_the_observations():
    tok, model = qwen_tokenizer(), tiny_qwen3()
    for module in model.modules():  # sharper random logits, so attention differences show in logprobs
        if isinstance(module, torch.nn.Linear):
            torch.nn.init.normal_(module.weight, std=0.2)
    generator = torch.Generator().manual_seed(0)
    obs_short = tok.encode("<tool_response>7</tool_response>")
    assert len(obs_short) == 3
    prompt_long = tok.apply_chat_template([{"role": "user", "content": "What is 6*7?"}], add_generation_prompt=True,
                                          tokenize=False)
    obs_long = tok.encode("<|im_end|>\n<|im_start|>user\n<tool_response>\n42\n</tool_response><|im_end|>\n"
                          "<|im_start|>assistant\n")
    short = rollout(model, [151644, 872, 198], [("gen", 2), ("obs", obs_short), ("gen", 2)], generator)
    long = rollout(model, tok.encode(prompt_long), [("gen", 4), ("obs", obs_long), ("gen", 3)], generator)
    batch = collate([short, long], pad_token_id=tok.pad_token_id, prompt_length=20, response_length=40)
    assert batch["attention_mask"][0].tolist() == [0] * 17 + [1] * 10 + [0] * 33  # BUG-115's 10 tokens, padded

    policy = batch["response_mask"].bool()
    recomputed = recompute_logprobs(model, batch)
    assert torch.isfinite(recomputed[policy]).all()
    gap = (recomputed - batch["rollout_log_probs"])[policy].abs().max().item()
    assert gap < 1e-4, gap  # the single-turn tolerance: fp32 CPU, cached decode vs one padded forward

    # Hiding the observations from attention (TimeSearch-R#7's bug) changes what A2 was sampled from.
    P = batch["prompts"].shape[1]
    hidden = batch["attention_mask"].clone()
    hidden[:, P:] = batch["attention_mask"][:, P:] * batch["response_mask"]
    wrong = recompute_logprobs(model, batch, attention_mask=hidden)
    a2 = torch.zeros_like(policy)
    a2[0, 5:7], a2[1, 4 + len(obs_long):7 + len(obs_long)] = True, True
    assert (wrong - batch["rollout_log_probs"])[a2].abs().max().item() > 100 * max(gap, 1e-6)


def test_import_agent_does_not_import_torch():
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, judgebox.agent as agent; agent.parsers.get_parser('hermes'); agent.AgentLoopOutput; "
            "agent.collate; assert 'torch' not in sys.modules, 'torch imported'; print(sorted(agent.__all__))")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("['AgentLoopConfig', 'AgentLoopOutput', 'AgentState', 'ToolAgentLoop', 'backends', "
                                   "'collate', 'parsers', 'scoring', 'tools']")
