"""What importing a public entry point loads (issue 41, faces as peers): the sandbox, its client and
``compute_score`` load no web server, engine or trainer, and the Ray actor's module (which uses the
server's admission control) not FastAPI. Module sets, not milliseconds: a timing would depend
on the machine's load."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = {"fastapi", "uvicorn", "starlette", "ray", "vllm", "torch", "transformers", "trl", "verl", "matplotlib",
         "pyarrow", "jupyter_client"}


def loaded(statement: str) -> set[str]:
    """The top-level packages of ``HEAVY`` a fresh interpreter holds after ``statement``."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    return set(json.loads(proc.stdout.splitlines()[-1])) & HEAVY


@pytest.mark.parametrize("statement", [
    "import judgebox.sandbox",
    "from judgebox.sandbox import SandboxClient, LocalSandbox",
    "from judgebox.reward import compute_score",
    "from judgebox.integrations.verl import compute_score",
    "from judgebox.sandbox.ray import executor",  # the actor: admission control, not FastAPI (it loaded the app)
])
def test_a_public_entry_point_loads_no_server_engine_or_trainer(statement):
    assert loaded(statement) == set()
