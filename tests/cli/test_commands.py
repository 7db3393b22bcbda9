"""The CLI as a package (issue 41): one module per command, named in ``COMMANDS``; the typed command's
module alone is imported, so ``judgebox --help`` and ``judgebox eval`` load no engine, cluster or web
server; every command is listed with its help, and ``python -m judgebox.cli`` is the same command."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from judgebox.cli import COMMANDS, build_parser

HEAVY = ("fastapi", "uvicorn", "starlette", "ray", "vllm", "torch", "transformers", "matplotlib", "pyarrow")
PROBE = """
import json, sys
from judgebox.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r} or m.startswith('judgebox.cli.'))))
"""


def loaded(argv: list[str], cwd) -> list[str]:
    """The heavy modules and the command modules a real interpreter holds after ``judgebox ARGV``."""
    proc = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv, heavy=HEAVY)], capture_output=True,
                          text=True, cwd=cwd, timeout=300)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_help_loads_no_command_module_and_eval_loads_only_its_own(tmp_path):
    assert loaded(["--help"], tmp_path) == ["judgebox.cli.common"]  # what every command shares, no command
    (tmp_path / "rows.jsonl").write_text(json.dumps({
        "task_id": 1, "text": "add", "code": "def add(a, b):\n    return a + b", "test_list": ["assert add(1, 2) == 3"]}) + "\n")
    modules = loaded(["eval", "rows.jsonl", "--format", "mbpp", "--samples", "gold", "--no-progress"], tmp_path)
    assert modules == ["judgebox.cli.common", "judgebox.cli.evaluate", "judgebox.cli.sandboxes"]  # no engine, ray, web
    assert (tmp_path / "judgebox-results" / "rows-gold.results.jsonl").exists()  # it really scored


def test_every_command_is_listed_with_its_help_and_has_its_module():
    parser = build_parser()
    listed = {a.dest for a in parser._subparsers._group_actions[0]._choices_actions}
    assert listed == set(COMMANDS)
    help_text = parser.format_help()
    for name in COMMANDS:
        assert f"    {name} " in help_text


@pytest.mark.parametrize("argv, status", [([], 1), (["evl"], 1), (["--version"], 0), (["datasets"], 0)])
def test_python_m_judgebox_cli_is_the_command_with_its_exit_statuses(tmp_path, argv, status):
    proc = subprocess.run([sys.executable, "-m", "judgebox.cli", *argv], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == status, proc.stderr
