"""verl on the sandbox's own Ray cluster (``ray_fleet``), configured by ``configs/verl/grpo_code_interpreter_ray.yaml``:

- the layout of a trainer's cluster: the pool started with ``resource="judgebox_executor"`` keeps its
  executors on the node that advertises it (a sandbox node added for the module), and leaves the
  other nodes' CPUs to verl's own actors;
- verl's ``RewardLoopManager`` starts its ``RewardLoopWorker`` actors on the cluster, and they score a
  batch with judgebox's ``compute_score`` through ``ray://`` (the recipe's reward section, loaded by
  verl's custom-reward loader): the verdicts of the embedded sandbox, the runs on the sandbox node;
- verl's ``AgentLoopWorker`` runs ``judgebox_tool_agent`` with the recipe's ``tool_config_ray.yaml``:
  its code_interpreter keeps a session on a judgebox executor across tool calls and the judge scores
  the final turn through ``ray://`` (the model is the agent tests' tiny vLLM engine, its turns forced).
"""

from __future__ import annotations

import os
import time

import pytest

pytest.importorskip("verl.experimental.agent_loop")

from tests.agent import conftest as agent_fixtures  # noqa: E402
from tests.integrations.mbpp import HALF_SQUARE, fenced, ground_truth, mbpp_problems  # noqa: E402
from tests.integrations.test_verl_recipe import RAY_RECIPE, compose  # noqa: E402

pytestmark = pytest.mark.integration

#: The agent tests' fixtures: the tiny Qwen3 and its vLLM engine (session-scoped, started on first use).
arun, tiny_model, tiny_tokenizer, vllm_backend = (agent_fixtures.arun, agent_fixtures.tiny_model,
                                                  agent_fixtures.tiny_tokenizer, agent_fixtures.vllm_backend)

#: The custom resource of the sandbox nodes (as configs/k8s/raycluster.yaml's worker group advertises).
RESOURCE = "judgebox_executor"


@pytest.fixture(scope="module")
def sandbox_node(ray_fleet):
    """The pool restarted with ``resource=judgebox_executor`` and one node advertising it (1 CPU):
    ``(pool, executor name, the fleet's own node ids)``; those nodes keep their CPUs free for verl."""
    fleet = ray_fleet.node_ids()
    with ray_fleet.pool_with(resource=RESOURCE, executors=0) as pool:
        assert pool.stats()["executors"] == []  # no node advertises the resource yet: no executor anywhere
        node = ray_fleet.cluster.add_node(num_cpus=1, resources={RESOURCE: 1})
        try:
            ray_fleet.cluster.wait_for_nodes()
            executor = ray_fleet.wait_executor_on(node.node_id)
            yield pool, executor, fleet
        finally:
            ray_fleet.cluster.remove_node(node)


def recipe(*overrides: str):
    """``grpo_code_interpreter_ray`` composed over verl's ppo_trainer, scaled to the tiny model."""
    from tests.agent.tiny import tiny_qwen3

    return compose(RAY_RECIPE.parent, RAY_RECIPE.stem, f"actor_rollout_ref.model.path={tiny_qwen3()}", *overrides)


def runs(pool) -> dict[str, int]:
    return {e["name"]: e["runs"] for e in pool.stats()["executors"]}


def test_the_pool_leaves_the_trainers_nodes_to_the_trainer(sandbox_node):
    import ray

    pool, executor, fleet = sandbox_node
    assert [(e["name"], e["slots"]) for e in pool.stats()["executors"]] == [(executor, 1)]
    for _ in range(200):  # the raylets report the CPUs the default pool's executors freed
        if ray.available_resources().get("CPU") == len(fleet):
            break
        time.sleep(0.1)
    assert ray.available_resources().get("CPU") == len(fleet)  # every CPU but the sandbox node's is free
    assert ray.available_resources().get(RESOURCE, 0) == 0  # the sandbox node's unit is the executor's


def test_verls_reward_loop_workers_score_a_batch_through_ray(sandbox_node):
    import ray
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    from tests.integrations.test_verl_reward import reward_batch

    pool, executor, fleet = sandbox_node
    config = recipe("reward.num_workers=2", "reward.custom_reward_function.reward_kwargs.score_mode=pass_rate")
    assert config.reward.custom_reward_function.reward_kwargs.sandbox_fusion_url == "ray://"
    manager = RewardLoopManager(config)  # verl's reward-loop workers: Ray actors on the cluster's nodes
    try:
        problems = mbpp_problems(3)
        wrong = problems[1].gold.replace("&", "|")  # union instead of intersection: fails every assert
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(config.actor_rollout_ref.model.path)
        data = reward_batch(tokenizer, [problems[i].prompt for i in (0, 1, 2, 1)],
                            [fenced(problems[0].gold), fenced(wrong), fenced(HALF_SQUARE), fenced(problems[1].gold)],
                            [ground_truth(problems[i]) for i in (0, 1, 2, 1)])
        before = runs(pool)
        out = manager.compute_rm_score(data)
        workers = {ray.get(w.__ray_call__.remote(lambda self: os.getpid())) for w in manager.reward_loop_workers}
    finally:
        for worker in manager.reward_loop_workers:
            ray.kill(worker)
    assert out.batch["rm_scores"].sum(dim=1).tolist() == pytest.approx([1.0, 0.0, 2 / 3, 1.0])
    assert list(out.non_tensor_batch["verdict"]) == ["accepted", "wrong_answer", "wrong_answer", "accepted"]
    assert list(out.non_tensor_batch["infra_error"]) == [False] * 4
    assert runs(pool)[executor] - before[executor] >= 4  # every completion ran on the sandbox node's executor
    assert len(workers) == 2 and os.getpid() not in workers  # scored in verl's own worker processes


def test_judgebox_tool_agent_runs_code_interpreter_and_scores_through_ray(sandbox_node, tiny_tokenizer, vllm_backend,
                                                                         arun):
    import torch
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    from tests.agent.test_verl_agent_loop import PROMPT_LEN, RESPONSE_LEN, SCRIPT, EngineClient, batch, segments

    pool, executor, fleet = sandbox_node
    config = recipe("actor_rollout_ref.rollout.name=vllm", f"actor_rollout_ref.rollout.prompt_length={PROMPT_LEN}",
                    f"actor_rollout_ref.rollout.response_length={RESPONSE_LEN}",
                    "actor_rollout_ref.rollout.calculate_log_probs=true",
                    "actor_rollout_ref.rollout.multi_turn.max_assistant_turns=4")
    assert config.actor_rollout_ref.rollout.multi_turn.tool_config_path == "configs/verl/tool_config_ray.yaml"
    worker = AgentLoopWorker(config, llm_client=EngineClient(config, vllm_backend.engine, tiny_tokenizer))
    before = runs(pool)
    try:
        out = arun(worker.generate_sequences(batch("judgebox_tool_agent", ["PROBLEM-ADD", "PROBLEM-SUB"])))
        stats = {e["name"]: e for e in pool.stats()["executors"]}
    finally:
        for tool in worker.tools:
            tool.inner.close()
    policy, observed = segments(tiny_tokenizer, out, 0)
    assert policy == "<|im_end|>".join(SCRIPT["PROBLEM-ADD"]) + "<|im_end|>"
    assert "42" in observed  # x = 41 kept by the session on the executor between the two calls
    assert list(out.non_tensor_batch["verdict"]) == ["accepted", "wrong_answer"]
    assert list(out.non_tensor_batch["tool_calls"]) == [2, 0]
    last = out.batch["attention_mask"][:, PROMPT_LEN:].sum(dim=1) - 1
    assert out.batch["rm_scores"][torch.arange(2), last].tolist() == [1.0, 0.0]
    # the two cells and the two judgements ran on the sandbox node's executor; the session is released
    assert stats[executor]["runs"] - before[executor] >= 4
    assert pool.stats()["executors"][0]["sessions"] == 0
