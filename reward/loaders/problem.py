"""``Problem``: one benchmark task as every loader produces it, and how a completion becomes the
candidate program the judge runs."""

from __future__ import annotations

from typing import Any, Callable, Optional

from pydantic import BaseModel, Field

from judgebox.reward.spec import TestDataError, TestSpec

from .completion import multipl_candidate


class Problem(BaseModel):
    """One task of a dataset.

    Attributes:
        task_id: the dataset's id, as a string (samples files refer to it).
        prompt: the text a model is given (HumanEval/MultiPL-E: the code prefix to continue).
        spec: the tests, or ``None`` when the row's test data is unusable (``data_error`` says why;
            such a problem is reported as ``test_data_error`` and never scored, case BUG-005).
        data_error: why the test data could not be read, else ``None``.
        gold: the reference solution in the form a sample takes (a continuation of ``prompt`` for
            HumanEval, a whole program otherwise), or ``None`` when the dataset has none.
        data_source: the dataset name (verl's ``data_source``).
        language: the sandbox language of the solutions.
        stop_tokens: MultiPL-E's stop sequences; when set, a completion continues ``prompt`` and is
            cut at the first stop token (the MultiPL-E convention).
        columns: other text columns of the row that can stand in as samples (e.g. ``gpt_solution``).
        messages: the row's whole chat prompt when it has one (verl rows: earlier turns, tool calls
            and results before the last user message, BUG-218); ``[]`` when the prompt is ``prompt``
            alone. A tool call's JSON-text ``arguments`` are decoded to an object.
    """

    task_id: str
    prompt: str = ""
    spec: Optional[TestSpec] = None
    data_error: Optional[str] = None
    gold: Optional[str] = None
    data_source: str
    language: str = "python"
    stop_tokens: list[str] = Field(default_factory=list)
    columns: dict[str, str] = Field(default_factory=dict)
    messages: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def tests_digest(self) -> str:
        """A fingerprint of what this problem's samples are judged against (its spec, or why it has
        none): the first 16 hex digits of the sha256 of its JSON. Results and trajectories keep it as
        ``tests_sha256``, so a resumed file is never kept for tests that changed since. A spec's is
        computed once (:func:`spec_digest`)."""
        if self.spec is not None:
            return spec_digest(self.spec)
        import hashlib

        return hashlib.sha256(f"data_error: {self.data_error}".encode()).hexdigest()[:16]

    def candidate(self, completion: str, sanitize: bool = False) -> tuple[TestSpec, str]:
        """The spec and the code to judge for one completion.

        Fenced completions (chat output) go through :func:`judgebox.reward.extract.extract_code` (last block);
        bare code is used as is. With ``stop_tokens`` the MultiPL-E rules apply
        (:func:`judgebox.reward.loaders.completion.multipl_candidate`). With ``sanitize`` the code (with the prompt it
        continues) goes through :func:`judgebox.reward.sanitize.sanitize_candidate` (evalplus's sanitizer).

        Raises:
            ValueError: the problem has no usable spec (``data_error`` is set), or ``sanitize`` for a
                problem that is not a Python function-completion problem.
            ImportError: ``sanitize`` without evalplus installed.
        """
        if self.spec is None:
            raise ValueError(f"{self.task_id}: no test spec ({self.data_error})")
        if self.stop_tokens and not sanitize:
            return multipl_candidate(self, completion)
        if sanitize:
            from judgebox.reward.sanitize import sanitize_candidate

            return sanitize_candidate(self.spec, self.extract(completion))
        return self.spec, self.extract(completion)

    def extract(self, completion: str, policy: str = "last") -> str:
        """The code of a completion: without a fence, the completion as it is, less its reasoning
        (what a ``</think>`` ends, BUG-212: a continuation keeps its indentation); else the ``policy``
        block of its answer region (:func:`judgebox.reward.extract.extract_code`)."""
        from judgebox.reward.extract import extract_code, split_reasoning

        if "```" not in completion:
            return split_reasoning(completion)[1]

        return extract_code(completion, self.language, policy, defines=self.defining())

    def defining(self) -> Optional[str]:
        """The function whose defining fenced block is a chat answer's code, of several (``None``:
        the ``policy`` block; BigCodeBench: ``task_func``, not a later example-usage block)."""
        return None


#: id(spec) -> its digest, while the spec lives (a finalizer drops the entry, so an id reused by a
#: later object never finds it)
_SPEC_DIGESTS: dict[int, str] = {}


def spec_digest(spec: TestSpec) -> str:
    """The first 16 hex digits of the sha256 of ``spec``'s JSON, computed once per spec object: a
    spec's JSON can be megabytes of test data, and every judged sample and every kept result asks for
    it. Specs are replaced, never changed in place (``spec_overrides`` copies them)."""
    digest = _SPEC_DIGESTS.get(id(spec))
    if digest is None:
        import hashlib
        import weakref

        digest = _SPEC_DIGESTS[id(spec)] = hashlib.sha256(spec.model_dump_json().encode()).hexdigest()[:16]
        weakref.finalize(spec, _SPEC_DIGESTS.pop, id(spec), None)
    return digest


def text_columns(row: dict[str, Any], used: set[str]) -> dict[str, str]:
    """The row's remaining string columns (candidates for ``--samples column:NAME``)."""
    return {k: v for k, v in row.items() if isinstance(v, str) and k not in used}


def guarded_spec(build: Callable[[], TestSpec]) -> tuple[Optional[TestSpec], Optional[str]]:
    """``(spec, None)``, or ``(None, reason)`` when the row's test data is unusable (BUG-005)."""
    try:
        return build(), None
    except (TestDataError, KeyError, TypeError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
