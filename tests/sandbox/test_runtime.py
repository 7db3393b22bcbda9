"""The program runtime: programs import what the dataset harnesses give them (the built ``default``
profile: pandas, scikit-learn, matplotlib, pytest, lodash, testify, JUnit), not the server's own
dependencies; a profile builds outside the server's environment; a runtime that is not built is an
error naming the build command, never a silent zero."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import venv

import pytest
from pydantic import ValidationError

from judgebox.sandbox import LocalSandbox
from judgebox.sandbox.runtime import PROFILES, Profile, find_runtime
from judgebox.sandbox.runtime.build import build_runtime, select
from judgebox.sandbox.runtime.store import load_runtime, runtime_folder

#: ``scripts/install.sh`` builds it (CI runs that); a test here cannot build it for the others.
needs_default = pytest.mark.skipif(find_runtime(None) is None,
                                   reason="the default runtime is not built: judgebox runtime build")


@pytest.fixture(scope="module")
def sandbox() -> LocalSandbox:
    return LocalSandbox()


@needs_default
def test_programs_run_in_the_built_default_runtime_not_the_servers_environment(sandbox):
    """BigCodeBench- and DS-1000-style imports work; fastapi (the server's own) is not there."""
    assert sandbox.executor.settings.python == find_runtime(None).python
    code = ("import numpy, pandas, scipy, sklearn, matplotlib, sympy, networkx, sortedcontainers\n"
            "print(pandas.__version__, sklearn.__version__)\n"
            "try:\n    import fastapi\nexcept ImportError as e:\n    print('no', e.name)\n")
    r = sandbox.run_code({"code": code, "language": "python", "memory_limit_MB": 1024})
    assert (r.status, r.run_result.stdout) == ("Success", "2.3.3 1.7.2\nno fastapi\n"), r.run_result.stderr[-500:]


@needs_default
@pytest.mark.parametrize("language, code, stdout", [
    ("pytest", "def test_sum():\n    assert 1 + 1 == 2\n", "1 passed"),
    ("nodejs", "const _ = require('lodash');\nconsole.log(_.isEqual({a: [1]}, {a: [1]}), _.VERSION)", "true 4.17.21\n"),
    ("go_test", 'package main\n\nimport (\n\t"testing"\n\n\t"github.com/stretchr/testify/assert"\n)\n\n'
                "func TestAdd(t *testing.T) {\n\tassert.Equal(t, 4, 2+2)\n}\n", "ok  \tcommand-line-arguments"),
    ("java", "import org.junit.Test;\nimport static org.junit.Assert.assertEquals;\n\npublic class Main {\n"
             "    @Test public void adds() { assertEquals(4, 2 + 2); }\n"
             "    public static void main(String[] a) { org.junit.runner.JUnitCore.main(\"Main\"); }\n}\n", "OK (1 test)"),
], ids=["pytest", "nodejs-lodash", "go_test-testify", "java-junit"])
def test_the_libraries_harnesses_import_are_there(sandbox, language, code, stdout):
    """SandboxFusion's runner tests that needed them (pytest, lodash, testify) and HumanEval-X's Go
    tests import these; they failed as the program's fault without a runtime."""
    r = sandbox.run_code({"code": code, "language": language, "run_timeout": 60, "compile_timeout": 60})
    out = r.run_result.stdout if r.run_result else ""
    assert r.status == "Success" and stdout in out, (out, r.run_result and r.run_result.stderr[-800:], r.compile_result)


@needs_default
def test_a_plot_in_a_notebook_cell_displays_a_png(sandbox):
    r = sandbox.run_jupyter({"cells": ["import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()"]})
    assert r.status == "Success", r
    assert any("image/png" in d for d in r.cells[0].display), r.cells[0]


def test_a_runtime_that_is_not_built_is_an_error_naming_the_build_command(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGEBOX_CACHE", str(tmp_path))
    with pytest.raises(ValidationError, match=r"runtime: the 'default' profile is not built here; build it with "
                                              r"`judgebox runtime build --profile default`"):
        LocalSandbox(runtime="default")
    with pytest.raises(ValidationError, match="runtime: 'nope' is neither 'host', a profile"):
        LocalSandbox(runtime="nope")


def test_the_host_runtime_is_the_servers_own_interpreter(monkeypatch, tmp_path):
    """``runtime='host'`` (or no built runtime): programs run in the interpreter running judgebox."""
    from judgebox.sandbox.config import SandboxSettings

    assert SandboxSettings(runtime="host").python == sys.executable
    assert SandboxSettings(runtime="host").program_runtime is None
    monkeypatch.setenv("JUDGEBOX_CACHE", str(tmp_path))  # nothing built there
    assert SandboxSettings().python == sys.executable


def test_pytest_without_pytest_names_the_build_command(tmp_path):
    """An interpreter that cannot import pytest: the language is refused with the fix (SandboxError),
    never run and scored as a failure."""
    venv.create(tmp_path / "bare", with_pip=False)
    bare = str(tmp_path / "bare" / "bin" / "python")
    sandbox = LocalSandbox(python=bare, runtime="host")
    r = sandbox.run_code({"code": "def test_a():\n    pass\n", "language": "pytest"})
    assert r.status == "SandboxError"
    assert (f"language 'pytest' is not installed on this sandbox: its interpreter {bare} cannot import pytest; "
            "build the program runtime with `judgebox runtime build --profile default`") in r.message


@pytest.mark.slow
def test_a_profile_builds_into_a_read_only_folder_of_its_own(tmp_path):
    """A small profile of ours (one pip package, one Debian package that is there and one that is
    not) builds into ``<root>/runtimes/<name>-<key>``, reports its versions, is read-only, is found
    by its folder, and is not built twice; an unfinished build is started again."""
    profile = Profile("tiny", python=("sortedcontainers==2.4.0",), debian=("bash", "judgebox-no-such-package"))
    lines: list[str] = []
    rt = build_runtime(profile, root=str(tmp_path), echo=lines.append)
    assert rt.folder == runtime_folder(profile, str(tmp_path))
    assert rt.report["python"]["sortedcontainers"] == "2.4.0"
    assert rt.report["debian"]["bash"]
    assert rt.report["missing"] == {"judgebox-no-such-package": "not installed: apt-get install "
                                    "judgebox-no-such-package (scripts/install.sh does)"}
    assert lines[:2] == ["[1/2] python: 1 packages", "[2/2] debian: 2 packages"]
    assert not stat.S_IMODE(os.stat(rt.python).st_mode) & 0o222 or os.path.islink(rt.python)
    assert not stat.S_IMODE(os.stat(rt.folder).st_mode) & 0o222
    out = subprocess.run([rt.python, "-c", "import sortedcontainers; print(sortedcontainers.__version__)"],
                         capture_output=True, text=True, check=True).stdout
    assert out == "2.4.0\n"
    assert find_runtime(rt.folder) == rt
    again: list[str] = []
    assert build_runtime(profile, root=str(tmp_path), echo=again.append) == rt
    assert again == [f"runtime 'tiny' is already built in {rt.folder}"]

    half = select(profile, ["debian"])  # another folder; make it look interrupted (no report)
    folder = runtime_folder(half, str(tmp_path))
    os.makedirs(os.path.join(folder, "python"))
    assert load_runtime(folder) is None
    lines = []
    built = build_runtime(half, root=str(tmp_path), echo=lines.append)
    assert lines[0] == f"removing an unfinished build in {folder}" and built.report["python"] == {}


def test_languages_selects_package_kinds_and_refuses_unknown_ones():
    default = PROFILES["default"]
    assert select(default, ["node"]).languages() == ("node",)
    with pytest.raises(ValueError, match="--languages: rust unknown; choose among python, node, debian"):
        select(default, ["rust"])


@needs_default
def test_health_and_languages_name_the_runtime_and_its_versions(live_server):
    import httpx

    runtime = httpx.get(f"{live_server}/health", timeout=60).json()["runtime"]
    assert (runtime["name"], runtime["python"]["pandas"], runtime["node"]["lodash"]) == ("default", "2.3.3", "4.17.21")
    assert runtime["debian"]["golang-github-stretchr-testify-dev"] and runtime["missing"] == {}
    languages = httpx.get(f"{live_server}/languages", timeout=60).json()
    assert languages["python"].startswith("Python 3.11") and languages["python"].endswith(" (runtime default)")
    assert not languages["cpp"].endswith(")")


@needs_default
def test_a_dataset_whose_harness_libraries_are_missing_is_refused_before_scoring(sandbox):
    """A manifest declares what its official harness gives programs; a sandbox without one of them
    is refused up front (naming it and the build command), since every correct solution that
    imports it would score 0. What the runtime has passes; Node.js packages are checked too."""
    from judgebox.reward.libraries import MissingLibraries, missing_libraries, require_libraries
    from judgebox.sandbox import SandboxClient

    client = SandboxClient("", local=sandbox)
    require_libraries(client, "ds-1000", "python", ["numpy", "pandas", "scipy", "sklearn", "matplotlib"])
    assert missing_libraries(client, "nodejs", ["lodash", "judgebox-no-such-package"]) == ["judgebox-no-such-package"]
    assert missing_libraries(client, "cpp", ["boost"]) == []  # not checked for other languages
    with pytest.raises(MissingLibraries, match=r"^bigcodebench: the sandbox's python programs cannot import "
                                               r"judgebox_no_such_module, which the dataset's official harness "
                                               r"provides; .*`judgebox runtime build --profile default`"):
        require_libraries(client, "bigcodebench", "python", ["pandas", "judgebox_no_such_module"])


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_pins_each_package_once(name):
    """Facts written down by us: ``name==version`` for pip, ``name@version`` for npm, each name once;
    a profile that leaves something of its source out says what and why."""
    import re

    profile = PROFILES[name]
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][\w.]*", p) for p in profile.python), profile.python
    assert all(re.fullmatch(r"@?[a-z0-9_.\-/]+@[0-9][\w.\-]*", p) for p in profile.node), profile.node
    names = [p.split("==")[0].lower() for p in profile.python] + [p.rsplit("@", 1)[0] for p in profile.node]
    assert len(names) == len(set(names))
    assert name == "default" or profile.exclusions


def test_a_row_whose_harness_prelude_needs_a_missing_library_is_masked_not_zero(sandbox):
    """Per row (verl's compute_score, TRL's code_reward, the judge): a spec whose prelude (the
    official harness's import block) imports a module the sandbox lacks is ``infra_error`` with the
    build command, the solution not run; a prelude the runtime satisfies (APPS's numpy) judges as usual."""
    from judgebox.integrations.verl import compute_score
    from judgebox.reward import CallCase, TestSpec, Verdict, ajudge, judge
    from judgebox.reward.libraries import prelude_libraries
    from judgebox.reward.preludes import PRELUDES
    from judgebox.sandbox import SandboxClient

    assert {k: prelude_libraries(v) for k, v in PRELUDES.items()} == \
        {"apps": ["numpy"], "livecodebench": [], "verl": [], "leetcode": ["sortedcontainers"], "taco": ["numpy"],
         "bigcodebench": []}
    client = SandboxClient("", local=sandbox)
    spec = TestSpec(kind="call", fn_name="f", calls=[CallCase(args=[1], expected=2)],
                    prelude="import os\nfrom judgebox_no_such_module.sub import x\n")
    right = "def f(a):\n    return a + 1\n"
    j = judge(spec, right, client=client)
    assert (j.verdict, j.n_passed, j.n_total) == (Verdict.infra_error, 0, 1)
    assert j.message.startswith("the sandbox's python programs cannot import judgebox_no_such_module, which the "
                                "dataset's official harness provides") and "judgebox runtime build" in j.message
    assert asyncio.run(ajudge(spec, right, client=client)).verdict == Verdict.infra_error
    score = compute_score("apps", f"```python\n{right}```", spec.model_dump(), infra_score=None)
    assert (score["score"], score["infra_error"]) == (None, True)
    apps = spec.model_copy(update={"prelude": PRELUDES["apps"]})
    assert judge(apps, "def f(a):\n    return int(np.int64(a) + 1)\n", client=client).verdict == Verdict.accepted
