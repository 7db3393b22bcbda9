"""The embedded executor runs a real program and reports SandboxFusion's fields."""

from judgebox.sandbox import LocalSandbox, RunStatus


def test_print_runs_in_embedded_sandbox():
    r = LocalSandbox().run_code({"code": "print(2 + 2)", "language": "python"})
    assert r.status == RunStatus.Success
    assert r.run_result.stdout == "4\n"
    assert r.run_result.return_code == 0
