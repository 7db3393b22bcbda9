"""TRL integration: ``code_reward``, a ``reward_funcs`` callable for ``GRPOTrainer``.

``code_reward(prompts, completions, **dataset_columns) -> list[float | None]``: one score per
completion; ``None`` when the verdict is unknown (sandbox failure or bad test data), which TRL turns
into NaN and ignores (BUG-007); the reason is logged as a warning on the ``judgebox.reward`` logger
(once per distinct message). The tests come from the first dataset column present among
``test_spec``, ``ground_truth``, ``input_output``, ``verification_info``, ``tests`` (a TestSpec or
``in_outs``, or open-r1 ``verification_info`` ``{"language", "test_cases": [{"type": "stdin_stdout",
"input", "output"}]}``, dict or JSON; see :meth:`judgebox.reward.spec.TestSpec.from_ground_truth`); a
``language`` key in the data sets the language and an optional ``language`` column overrides it. Completions may be plain strings or
conversational (a list of ``{"role", "content"}`` messages: the last assistant message is used).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from judgebox.reward.batch import judge_many
from judgebox.reward.extract import extract_code
from judgebox.reward.judge import warn_unknown
from judgebox.reward.spec import TestDataError, TestSpec
from judgebox.reward.verdict import Judgement, Verdict
from judgebox.sandbox.client.client import SandboxClient

#: Dataset columns searched for the tests, in order.
TEST_COLUMNS = ("test_spec", "ground_truth", "input_output", "verification_info", "tests")


def content_text(content: Any) -> str:
    """A message ``content`` as text: a string as it is; OpenAI/transformers content parts
    (``[{"type": "text", "text": ...}, ...]``) joined in order, non-text parts left out."""
    if not isinstance(content, (list, tuple)):
        return str(content or "")
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type", "text") == "text":
            texts.append(str(part.get("text") or ""))
    return "".join(texts)


def completion_text(completion: Any) -> str:
    """The text of a plain or conversational completion (last assistant message's ``content``,
    plain or a list of content parts)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return content_text(completion.get("content"))
    if isinstance(completion, (list, tuple)):
        msgs = [m for m in completion if isinstance(m, dict)]
        assistant = [m for m in msgs if m.get("role") == "assistant"] or msgs
        return content_text(assistant[-1].get("content")) if assistant else ""
    return ""


def tests_column(columns: Any) -> str:
    """The name of the first of :data:`TEST_COLUMNS` in ``columns`` (a row or a batch of columns).

    Raises:
        ValueError: none of them is there (the message lists the names to add).
    """
    name = next((c for c in TEST_COLUMNS if c in columns), None)
    if name is None:
        raise ValueError(f"code_reward: no tests column; add one of {TEST_COLUMNS} to the dataset")
    return name


def row_spec(ground_truth: Any, language: Optional[str] = None) -> TestSpec:
    """One row's :class:`TestSpec` from its tests column value (``language``, from a ``language``
    column, overrides the data's). Raises :class:`TestDataError` for bad test data."""
    return TestSpec.from_ground_truth(ground_truth, **({"language": language} if language else {}))


def make_code_reward(*, score_mode: str = "pass_rate", client: Optional[SandboxClient] = None,
                     concurrency: int = 16, extract_policy: str = "last") -> Callable[..., list[Optional[float]]]:
    """Build a TRL reward function.

    Args:
        score_mode: ``"pass_rate"`` (fraction of tests passed, default) or ``"binary"``.
        client: sandbox client (default: environment, else embedded).
        concurrency: completions judged at once.
        extract_policy: ``"last"`` or ``"first"`` code block (:func:`judgebox.reward.extract.extract_code`).

    Raises:
        ValueError: unknown ``score_mode``.
    """
    if score_mode not in ("pass_rate", "binary"):
        raise ValueError(f"score_mode: {score_mode!r} is not 'pass_rate' or 'binary'")

    def code_reward(prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[Optional[float]]:
        """Score ``completions`` against the tests in the dataset columns (see module docstring).

        Raises:
            ValueError: no tests column, or a column whose length differs from ``completions``.
        """
        name = tests_column(columns)
        if len(columns[name]) != len(completions):
            raise ValueError(f"code_reward: {len(columns[name])} {name} rows for {len(completions)} completions")
        languages = columns.get("language") or [None] * len(completions)
        specs, codes, bad = [], [], {}
        for i, (gt, comp, lang) in enumerate(zip(columns[name], completions, languages)):
            try:
                spec = row_spec(gt, lang)
            except TestDataError as exc:
                bad[i] = Judgement(verdict=Verdict.test_data_error, message=f"column {name!r}: {exc}")
                spec = TestSpec(kind="stdio")  # not judged: the reward is None
            specs.append(spec)
            codes.append(extract_code(completion_text(comp), spec.language, extract_policy))  # type: ignore[arg-type]
        good = [i for i in range(len(specs)) if i not in bad]
        judged = dict(zip(good, judge_many([specs[i] for i in good], [codes[i] for i in good], client=client,
                                           concurrency=concurrency, stop_on_first_failure=score_mode == "binary")))
        judgements = [bad.get(i) or judged[i] for i in range(len(specs))]
        for j in judgements:
            warn_unknown("code_reward", j)
        return [_value(j, score_mode) for j in judgements]

    return code_reward


def _value(j: Judgement, score_mode: str) -> Optional[float]:
    if j.pass_rate is None:
        return None
    return (1.0 if j.passed else 0.0) if score_mode == "binary" else j.pass_rate


#: The default TRL reward function (pass rate, environment-configured sandbox).
code_reward = make_code_reward()
