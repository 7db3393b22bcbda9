"""Code extraction from completion layouts seen in real use: reasoning blocks (``<think>``,
``<thinking>``) are skipped when code follows them and a draft inside one is never run; a fence
sharing its line with text still opens or closes a block (``Here```python``, ``` ``` and done``);
an assistant message made of content parts is read as its text parts joined in order (real runs in
the embedded sandbox through compute_score and code_reward)."""

import pytest

from judgebox.integrations.trl import code_reward
from judgebox.integrations.verl import compute_score
from judgebox.reward import StdioCase, TestSpec, extract_code

PLUS1 = TestSpec(kind="stdio", stdio=[StdioCase(stdin="1\n", expected="2\n")]).model_dump_json()


@pytest.mark.parametrize("completion,expected", [
    # the user's three inputs
    ("<think>\n```python\nprint('draft')\n```</think>\n```python\nprint('final')\n```", "print('final')\n"),
    ("Here```python\nprint(1)\n```", "print(1)\n"),
    ("```python\nprint(1)\n``` and done", "print(1)\n"),
    # the same kinds, other shapes
    ("<thinking>\n```python\nprint('draft')\n```\n</thinking>\nFinal:\n```py\nprint('final')\n```", "print('final')\n"),
    ("<think>\nonly reasoning here\n</think>\n```python\nprint(2)\n```\nprint(3)", "print(2)\n"),
    ("<think>\n```python\nprint('kept')\n```</think>\nThat is the answer.", ""),  # BUG-212: a draft is never run
    ("<think>plan: add one</think>\nprint(int(input())+1)", "print(int(input())+1)\n"),
    ("<think>plan</think>\nprint(int(input())+1)\n```", "print(int(input())+1)\n"),
    ("Solution:```py\nprint(4)\n```\nDone.", "print(4)\n"),
    ("```python\nprint(5)\n```</think>", ""),  # BUG-212: before </think> is reasoning (<think> in the prompt)
    ("```python\nx = 6\nprint(x)```\nThat prints 6.", "x = 6\nprint(x)\n"),
    ("def f():\n    return 7```", "def f():\n    return 7\n"),
    ("```python\nprint(1)\n``` first\n```python\nprint(8)\n``` second", "print(8)\n"),
])
def test_user_finding_1_extract_code_layouts(completion, expected):
    """Reasoning blocks are skipped when code follows them; a fence sharing its line with text still
    opens (``Here```python``) or closes (``` ```</think>``, ``` ``` and done``, ``print(x)```) a block."""
    assert extract_code(completion) == expected


def test_user_finding_1_think_draft_is_not_judged():
    """The draft inside <think> would fail; the final block after it passes (real run)."""
    completion = "<think>\n```python\nprint(0)\n```</think>\n```python\nprint(int(input())+1)\n```"
    assert compute_score("x", completion, PLUS1)["score"] == 1.0
    assert code_reward(["p"], [completion], ground_truth=[PLUS1]) == [1.0]


def test_user_finding_1_fence_with_trailing_text_closes_first_policy():
    """With policy first, a block closed by ``` and done`` ends there: the second block is not glued on."""
    completion = "```python\nprint(int(input())+1)\n``` and done\n```python\nprint(0)\n```"
    assert extract_code(completion, policy="first") == "print(int(input())+1)\n"
    assert compute_score("x", completion, PLUS1, extract_policy="first")["score"] == 1.0


def test_code_reward_reads_an_assistant_message_made_of_content_parts():
    """transformers/OpenAI content parts: the text parts joined in order are the completion (it was
    ``str(list)``, so the right code was never run and scored 0.0)."""
    parts = [{"type": "text", "text": "Here:\n```python\nprint(int(input()) "}, {"type": "image", "url": "x.png"},
             {"type": "text", "text": "+ 1)\n```"}]
    assert code_reward(["p"], [[{"role": "assistant", "content": parts}]], ground_truth=[PLUS1]) == [1.0]
    assert code_reward(["p"], [[{"role": "assistant", "content": "```python\nprint(2)\n```"}]],
                       ground_truth=[PLUS1]) == [1.0]
