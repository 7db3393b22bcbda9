"""``forkserver_preload``: a Python run forked from a fork-server that imported standard-library
modules first (judgebox.sandbox.speedups.preload), with nothing else changed: the same isolation, its
own random state, a run's own ``json.py`` still wins, and only standard-library names are accepted."""

from __future__ import annotations

import base64

import pytest
from pydantic import ValidationError

from judgebox.sandbox import LocalSandbox
from judgebox.sandbox.executor import PRELOAD_SETS
from judgebox.sandbox.models import RunCodeRequest


@pytest.fixture(scope="module")
def sb():
    return LocalSandbox()


def _out(sb, code, preload=(), files=None):
    r = sb.run_code({"code": code, "language": "python", "run_timeout": 10, "forkserver_preload": list(preload),
                     "files": files or {}})
    assert (r.status.value, r.run_result.return_code) == ("Success", 0), r
    return r.run_result.stdout


def test_a_preloaded_run_starts_with_the_modules_imported_and_a_plain_one_without(sb):
    code = "import sys\nprint('json' in sys.modules, 'json.decoder' in sys.modules, 'ast' in sys.modules)\n"
    assert _out(sb, code, ["json"]) == "True True False\n"
    assert _out(sb, code) == "False False False\n"
    server = sb.executor._preloaded[("json",)]
    assert server.stats()["forked"] >= 1
    assert sb.executor.forkserver_stats()["forked"] >= server.stats()["forked"] + 1


def test_a_preloaded_run_keeps_the_isolation_of_a_plain_one(sb):
    code = ("import os, socket\nprint(os.getpid(), os.getuid() == 0)\n"
            "print(sorted(n for n in os.listdir('/sys/class/net')) if os.path.isdir('/sys/class/net') else 'no-net')\n")
    assert _out(sb, code, ["json", "ast"]) == _out(sb, code)
    assert _out(sb, code, ["json", "ast"]).startswith("2 ")  # its own PID namespace, as every run


def test_preloaded_random_is_reseeded_in_every_run(sb):
    code = "import random\nprint(random.random())\n"
    assert _out(sb, code, ["random"]) != _out(sb, code, ["random"])


def test_a_file_of_the_run_that_shadows_a_preload_module_is_imported_as_without_preload(sb):
    mine = base64.b64encode(b"VALUE = 'mine'\n").decode()
    code = "import json\nprint(getattr(json, 'VALUE', 'stdlib'))\n"
    assert _out(sb, code, ["json"], {"json.py": mine}) == "mine\n"
    assert _out(sb, code, ["json"]) == "stdlib\n"


def test_a_file_that_shadows_a_module_the_preload_imports_in_turn_is_imported_as_without_preload(sb):
    """``json`` imports ``keyword``, ``re``, ``enum``...: the fork-server keeps those too, so any
    standard-library name among the run's files (however its path is spelt) forks the run plain."""
    mine = base64.b64encode(b"kwlist = ['mine']\n").decode()
    code = "import keyword\nprint(keyword.kwlist[:1])\n"
    assert _out(sb, code, ["json"], {"keyword.py": mine}) == "['mine']\n"
    r = sb.run_tests({"code": code, "language": "python", "forkserver_preload": ["json"],
                      "cases": [{"files": {"x/../keyword.py": mine}}]})
    assert r.run_results[0].stdout == "['mine']\n", r


def test_a_module_that_fails_to_import_is_left_out_of_the_preload_and_the_run_still_runs(sb):
    code = "import sys\nprint('json' in sys.modules)\n"
    assert _out(sb, code, ["json.no_such_module", "json"]) == "True\n"


def test_a_preloaded_platform_never_shows_the_fork_servers_host_name(sb):
    """``uuid`` imports ``platform``, whose uname cache the fork-server (outside the run's UTS
    namespace) would fill: the run sees its own host name."""
    code = "import platform, socket\nprint(platform.node() == socket.gethostname())\n"
    assert _out(sb, code, ["uuid"]) == "True\n"


@pytest.mark.parametrize("names,says", [
    (["numpy"], "'numpy' is not a standard-library module"),
    (["this"], "'this' cannot be preloaded"),
    (["platform"], "'platform' cannot be preloaded"),
    (["unittest.__main__"], "a __main__ module runs a program"),
    (["json." + "a" * 200], "at most 100 characters"),
    (["json", "1x"], "'1x' is not a module name"),
    (["json"] * 65, "at most 64 modules"),
])
def test_a_name_that_cannot_be_preloaded_is_refused_naming_the_field(names, says):
    with pytest.raises(ValidationError) as err:
        RunCodeRequest(code="print(1)", language="python", forkserver_preload=names)
    assert "forkserver_preload" in str(err.value) and says in str(err.value)


@pytest.mark.slow
def test_past_the_preload_sets_limit_runs_are_forked_from_the_plain_fork_server(monkeypatch):
    from judgebox.sandbox import executor as executor_module

    monkeypatch.setattr(executor_module, "PRELOAD_IDLE_S", 1e9)  # no set goes idle, however slow the runs
    box = LocalSandbox()
    modules = ("json", "ast", "csv", "heapq", "shlex", "glob", "textwrap", "getopt", "bisect")  # none imports another
    sets = [[m] for m in modules]
    assert len(sets) == PRELOAD_SETS + 1
    code = f"import sys\nprint(sorted(m for m in {modules!r} if m in sys.modules))\n"
    seen = [_out(box, code, names) for names in sets]
    assert seen[:PRELOAD_SETS] == [f"{names}\n" for names in sets[:PRELOAD_SETS]]
    assert seen[PRELOAD_SETS] == "[]\n"  # bisect's run: no fork-server of its own, the plain one
    assert sorted(box.executor._preloaded) == sorted(tuple(names) for names in sets[:PRELOAD_SETS])


@pytest.mark.slow
def test_a_new_set_replaces_the_least_recently_used_once_it_has_been_idle(monkeypatch):
    """Eight sets asked for once (stray names) no longer keep a ninth, busy set (the harness's)
    cold for good: once the least recently used one has been idle ``PRELOAD_IDLE_S`` seconds, the
    new set takes its place; the replaced fork-server is stopped, and its set is forked again."""
    from judgebox.sandbox import executor as executor_module

    monkeypatch.setattr(executor_module, "PRELOAD_IDLE_S", 1e9)  # no set goes idle, however slow the runs
    box = LocalSandbox()
    modules = ("json", "ast", "csv", "heapq", "shlex", "glob", "textwrap", "getopt", "bisect")
    code = f"import sys\nprint(sorted(m for m in {modules!r} if m in sys.modules))\n"
    for m in modules[:PRELOAD_SETS]:
        assert _out(box, code, [m]) == f"['{m}']\n"
    zygote = box.executor._preloaded[("json",)]._zygote.proc
    assert _out(box, code, ["bisect"]) == "[]\n"  # no set has been idle PRELOAD_IDLE_S: the plain one
    before = box.executor.forkserver_stats()
    monkeypatch.setattr(executor_module, "PRELOAD_IDLE_S", 0.0)
    assert _out(box, code, ["bisect"]) == "['bisect']\n"  # json's, the least recently used, is replaced
    after = box.executor.forkserver_stats()  # /metrics counters: json's runs stay counted
    assert (after["forked"], after["started"]) == (before["forked"] + 1, before["started"] + 1)
    assert sorted(box.executor._preloaded) == sorted((m,) for m in modules[1:])
    assert zygote.wait(timeout=10) is not None  # the replaced fork-server was stopped
    assert _out(box, code, ["json"]) == "['json']\n"  # json comes back in the place of ast's
    assert ("ast",) not in box.executor._preloaded
