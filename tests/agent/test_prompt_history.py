"""BUG-218: a dataset row's whole chat prompt reaches the model (``judgebox rollout`` kept only its last
user message), and OpenAI-style JSON-text tool-call ``arguments`` in that history render as the
object chat templates expect; text that is not JSON is rendered verbatim where the template can, and
is an error naming the row and the message, before any trajectory, where it cannot."""

from __future__ import annotations

import copy
import json

import pytest

from judgebox.agent.config import AgentLoopConfig
from judgebox.agent.loop import ToolAgentLoop
from judgebox.agent.rollout import Rollout, prompt_messages
from judgebox.reward.loaders import load_problems
from tests.agent.loop_helpers import Scripted
from tests.agent.qwen_fixtures import CODE_INTERPRETER_TOOL, qwen_tokenizer

CODER_TEMPLATE = (  # a minimal Qwen3-Coder-style template: it iterates the arguments' items
    "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + (message.content or '') }}"
    "{%- if message.tool_calls %}{%- for tool_call in message.tool_calls %}{%- set tool_call = tool_call.function "
    "if tool_call.function is defined else tool_call %}{{- '\\n<tool_call>\\n<function=' + tool_call.name + '>\\n' }}"
    "{%- for args_name, args_value in tool_call.arguments|items %}{{- '<parameter=' + args_name + '>\\n' + "
    "(args_value if args_value is string else args_value|tojson) + '\\n</parameter>\\n' }}{%- endfor %}"
    "{{- '</function>\\n</tool_call>' }}{%- endfor %}{%- endif %}{{- '<|im_end|>\\n' }}{%- endfor %}")


def rows_file(tmp_path, arguments):
    prompt = [{"role": "user", "content": "compute 6*7"},
              {"role": "assistant", "content": "", "tool_calls": [
                  {"type": "function", "function": {"name": "code_interpreter", "arguments": arguments}}]},
              {"role": "tool", "content": "42"},
              {"role": "user", "content": "now add 1"}]
    row = {"data_source": "toy", "prompt": prompt, "ability": "code", "extra_info": {"index": 7},
           "reward_model": {"style": "rule", "ground_truth": json.dumps({"inputs": ["\n"], "outputs": ["43\n"]})}}
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return load_problems(path, "verl")[0]


def test_the_whole_history_is_the_prompt_and_string_arguments_become_an_object(tmp_path):
    problem = rows_file(tmp_path, json.dumps({"code": "print(6*7)"}))
    messages = prompt_messages(problem)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]  # was: the last user only
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == {"code": "print(6*7)"}
    assert prompt_messages(problem, system="Be brief.")[0] == {"role": "system", "content": "Be brief."}


def test_qwen3_renders_string_arguments_as_the_same_ids_as_an_object(tmp_path):
    tokenizer = qwen_tokenizer()
    as_text = prompt_messages(rows_file(tmp_path, json.dumps({"code": "print(6*7)"})))
    as_object = prompt_messages(rows_file(tmp_path, {"code": "print(6*7)"}))
    ids = tokenizer.apply_chat_template(as_text, tools=[CODE_INTERPRETER_TOOL], tokenize=False)
    assert ids == tokenizer.apply_chat_template(as_object, tools=[CODE_INTERPRETER_TOOL], tokenize=False)
    assert ('<|im_start|>assistant\n<tool_call>\n{"name": "code_interpreter", "arguments": {"code": "print(6*7)"}}\n'
            '</tool_call><|im_end|>\n') in ids
    verbatim = prompt_messages(rows_file(tmp_path, "print(6*7)"))  # not JSON: Qwen3 renders the text as it is
    assert '"arguments": print(6*7)}' in tokenizer.apply_chat_template(verbatim, tools=[CODE_INTERPRETER_TOOL],
                                                                       tokenize=False)


def coder_tokenizer():
    tokenizer = copy.deepcopy(qwen_tokenizer())
    tokenizer.chat_template = CODER_TEMPLATE
    return tokenizer


def test_a_template_iterating_arguments_renders_decoded_ones_exactly(tmp_path):
    messages = prompt_messages(rows_file(tmp_path, json.dumps({"code": "print(6*7)"})))
    text = coder_tokenizer().apply_chat_template(messages, tokenize=False)
    assert ("<|im_start|>assistant\n\n<tool_call>\n<function=code_interpreter>\n<parameter=code>\nprint(6*7)\n"
            "</parameter>\n</function>\n</tool_call><|im_end|>\n") in text


def test_text_arguments_a_template_cannot_render_are_an_error_before_any_trajectory(tmp_path):
    problem = rows_file(tmp_path, "print(6*7)")
    loop = ToolAgentLoop(AgentLoopConfig(), coder_tokenizer(), Scripted([]), tools=())
    rollout = Rollout([problem], loop, tmp_path / "t.jsonl")
    with pytest.raises(ValueError, match=r"^row 7: the chat template cannot render message 1: "
                                         r"tool_calls\[0\]\.function\.arguments is text, not a JSON object "
                                         r"\('print\(6\*7\)'\): "):
        rollout.check_prompts()
