"""Wire compatibility: what SandboxFusion's clients send, judgebox answers the same way.

Real clients against a real ``judgebox serve`` on loopback: the official ``sandbox_fusion`` package
(``run_code``, ``run_jupyter``), verl's ``call_sandbox_api`` payload sent with plain ``requests``,
and malformed bodies that must be HTTP 422 naming the field.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os

import httpx
import pytest
import requests
import sandbox_fusion

from judgebox.sandbox import LocalSandbox, runfs
from judgebox.sandbox.errors import SandboxRequestError
from judgebox.sandbox.languages import RECIPES
from tests.conftest import HTTP_TIMEOUT

#: One program per language: reads an integer from stdin and prints its double (test runners print
#: their summary instead). Java's public class is deliberately not ``Main``.
PROGRAMS = {
    "python": ("print(int(input()) * 2)", "42\n"),
    "pytest": ("def test_double():\n    assert 21 * 2 == 42\n", None),
    "cpp": ("#include <iostream>\nint main() { long long n; std::cin >> n; std::cout << n * 2 << std::endl; }", "42\n"),
    "java": ("import java.util.*;\n\npublic class Solution {\n    public static void main(String[] args) {\n"
             "        Scanner in = new Scanner(System.in);\n        System.out.println(in.nextInt() * 2);\n    }\n}\n",
             "42\n"),
    "nodejs": ("const s = require('fs').readFileSync(0, 'utf8');\nconsole.log(parseInt(s) * 2);", "42\n"),
    "go": ("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar n int\n\tfmt.Scan(&n)\n\tfmt.Println(n * 2)\n}\n",
           "42\n"),
    "go_test": ("package main\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tif 21*2 != 42 {\n"
                "\t\tt.Fatal(\"bad\")\n\t}\n}\n", None),
    "bash": ("read n\necho $((n * 2))", "42\n"),
    "rust": ("use std::io::Read;\nfn main() {\n    let mut s = String::new();\n"
             "    std::io::stdin().read_to_string(&mut s).unwrap();\n    let n: i64 = s.trim().parse().unwrap();\n"
             "    println!(\"{}\", n * 2);\n}\n", "42\n"),
    "ruby": ("puts gets.to_i * 2", "42\n"),
    "php": ("<?php\necho intval(trim(fgets(STDIN))) * 2, \"\\n\";", "42\n"),
    "perl": ("my $n = <STDIN>;\nprint $n * 2, \"\\n\";", "42\n"),
    "lua": ("print(io.read('n') * 2)", "42\n"),
    "R": ("n <- as.integer(readLines(file('stdin'), n = 1))\ncat(n * 2, '\\n', sep = '')", "42\n"),
    "racket": ("#lang racket\n(displayln (* 2 (read)))", "42\n"),
    "D_ut": ("import std.stdio;\nvoid main() { long n; readf(\" %d\", n); writeln(n * 2); }\n", "42\n"),
    "typescript": ("declare var require: any;\nconst n: number = parseInt(require('fs').readFileSync(0, 'utf8'));\n"
                   "console.log(n * 2);", "42\n"),
    "verilog": ("module tb;\n  integer n;\n  initial begin\n    n = $fscanf(32'h8000_0000, \"%d\", n);\n"
                "    $display(\"%0d\", 42);\n    $finish;\n  end\nendmodule\n", "42\n"),
    "scala": ("object Twice {\n  def main(args: Array[String]): Unit = println(scala.io.StdIn.readLine().trim.toInt * 2)\n}\n",
              "42\n"),
    "kotlin_script": ("println(readLine()!!.trim().toInt() * 2)\n", "42\n"),
    "junit": ("import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.assertEquals;\n\n"
              "public class DoubleTest {\n    @Test\n    void doubles() { assertEquals(42, 21 * 2); }\n}\n", None),
    "gtest": ("#include <gtest/gtest.h>\n\nTEST(Double, Doubles) { EXPECT_EQ(21 * 2, 42); }\n", None),
    "sql": ("select 21 * 2;\n", "42\n"),
    "jest": ("import { expect, test } from '@jest/globals';\n\ntest('doubles', () => { expect(21 * 2).toBe(42); });\n",
             None),
}
#: What a passing test runner prints somewhere in its stdout (Jest: its stderr).
RUNNER_PASS = {"pytest": "1 passed", "go_test": "ok", "junit": "[         1 tests successful      ]",
               "gtest": "[  PASSED  ] 1 test.", "jest": "Tests:       1 passed, 1 total"}

SF_RESPONSE_FIELDS = {"status", "message", "compile_result", "run_result", "executor_pod_name", "files"}
SF_COMMAND_FIELDS = {"status", "execution_time", "return_code", "stdout", "stderr"}


@pytest.fixture(scope="module")
def installed(live_server) -> dict[str, str]:
    """``GET /languages`` of the live server: installed language -> toolchain version."""
    r = httpx.get(f"{live_server}/languages", timeout=60)
    assert r.status_code == 200
    return r.json()


def test_languages_lists_installed_toolchains_with_versions(installed):
    """GET /languages names each installed recipe with its version line; every one is tested below."""
    assert "python" in installed and "bash" in installed
    assert set(installed) <= set(RECIPES)
    assert set(installed) <= set(PROGRAMS)
    assert all(isinstance(v, str) and v for v in installed.values())


def test_languages_detail_names_every_language_with_toolchain_version_and_source(live_server, installed):
    """``GET /languages?detail=true``: every SandboxFusion language; a recipe's toolchain, version,
    source (Debian package, npm, PyPI, rustup) and packages, or why judgebox has none. The plain
    ``GET /languages`` is unchanged (installed name -> version line)."""
    from judgebox.sandbox.models import SANDBOX_FUSION_LANGUAGES

    r = httpx.get(f"{live_server}/languages", params={"detail": "true"}, timeout=120)
    assert r.status_code == 200
    detail = r.json()
    assert list(detail) == list(SANDBOX_FUSION_LANGUAGES)
    assert {n for n, d in detail.items() if d["installed"]} == set(installed)
    for name, d in detail.items():
        if name in RECIPES:
            assert set(d) == {"installed", "toolchain", "version", "source", "packages"}, d
            assert d["toolchain"] and d["packages"]
        else:
            assert set(d) == {"installed", "reason"} and not d["installed"] and "no recipe" in d["reason"], d
    assert detail["bash"]["source"].startswith("Debian package bash ")
    assert detail["swift"]["reason"] == "judgebox has no recipe for it (its toolchain has no Debian 12 package)"
    if "junit" in installed:  # the compiler's version line, then the library's Debian package
        assert detail["junit"]["version"].startswith("javac ") and ", junit5 5." in detail["junit"]["version"]
        assert "junit-platform-console-standalone.jar: Debian package junit5 5." in detail["junit"]["source"]
    if "jest" in installed:
        assert detail["jest"]["version"].startswith("jest 29.7.0 on Node.js v")
        assert detail["jest"]["source"].startswith("npm jest@29.7.0 in the program runtime ")


def test_ping_is_pong(live_server):
    """GET /v1/ping returns the JSON string "pong" (SandboxFusion's health check)."""
    r = httpx.get(f"{live_server}/v1/ping", timeout=10)
    assert r.status_code == 200 and r.json() == "pong"


@pytest.mark.parametrize("language", sorted(PROGRAMS))
def test_official_client_run_code_in_every_language(live_server, installed, language):
    """sandbox_fusion.run_code works for every installed language (Java's public class is found)."""
    if language not in installed:
        pytest.skip(f"{language} toolchain not installed")
    code, expected = PROGRAMS[language]
    resp = sandbox_fusion.run_code(
        sandbox_fusion.RunCodeRequest(code=code, language=language, stdin="21\n", compile_timeout=60, run_timeout=30),
        endpoint=live_server, max_attempts=1, client_timeout=180)
    assert resp.status == sandbox_fusion.RunStatus.Success, resp
    assert resp.run_result.status == sandbox_fusion.CommandRunStatus.Finished
    assert resp.run_result.return_code == 0
    if expected is not None:
        assert resp.run_result.stdout == expected
    else:
        assert RUNNER_PASS[language] in resp.run_result.stdout + resp.run_result.stderr
    compiled = RECIPES[language].compile is not None
    assert (resp.compile_result is not None) == compiled
    if compiled:
        assert resp.compile_result.return_code == 0


def test_official_client_run_jupyter(live_server):
    """sandbox_fusion.run_jupyter: SandboxFusion's own example cells parse into its response model."""
    resp = sandbox_fusion.run_jupyter(
        sandbox_fusion.RunJupyterRequest(cells=["a = 123", "a", "print(a)", "raise RuntimeError('error message')"],
                                         cell_timeout=10, total_timeout=60),
        endpoint=live_server, max_attempts=1, client_timeout=120)
    assert resp.status == sandbox_fusion.RunStatus.Success
    assert [c.stdout for c in resp.cells] == ["", "", "123\n", ""]
    assert resp.cells[1].display == [{"text/plain": "123"}]
    assert resp.cells[3].error[0]["ename"] == "RuntimeError"


@pytest.mark.parametrize("stdin, expected", [(None, "0\n"), ("abc", "3\n")])
def test_verl_payload_with_plain_requests(live_server, stdin, expected):
    """verl's call_sandbox_api: the exact eight-field JSON posted to the full /run_code URL with
    JSON headers -> HTTP 200 and a body with exactly SandboxFusion's six response fields."""
    payload = json.dumps({
        "compile_timeout": 10, "run_timeout": 10,
        "code": "import sys\nprint(len(sys.stdin.read()))", "stdin": stdin,
        "memory_limit_MB": 1024, "language": "python", "files": {}, "fetch_files": [],
    })
    r = requests.post(f"{live_server}/run_code", data=payload, timeout=30,
                      headers={"Content-Type": "application/json", "Accept": "application/json"})
    assert r.status_code == 200
    body = r.json()
    assert set(body) == SF_RESPONSE_FIELDS
    assert body["status"] == "Success"
    assert body["compile_result"] is None
    assert SF_COMMAND_FIELDS <= set(body["run_result"])
    assert body["run_result"]["stdout"] == expected
    assert body["run_result"]["return_code"] == 0


def test_verl_payload_compile_error_is_failed_without_run(live_server):
    """verl reads compile errors from compile_result: Failed, compile rc != 0, run_result null."""
    r = requests.post(f"{live_server}/run_code", timeout=60, json={
        "compile_timeout": 30, "run_timeout": 10, "code": "int main() { return x; }", "stdin": None,
        "memory_limit_MB": -1, "language": "cpp", "files": {}, "fetch_files": []})
    body = r.json()
    assert r.status_code == 200
    assert body["status"] == "Failed"
    assert body["compile_result"]["status"] == "Finished"
    assert body["compile_result"]["return_code"] != 0
    assert "x" in body["compile_result"]["stderr"]
    assert body["run_result"] is None


@pytest.mark.parametrize("code, status, return_code", [
    ("raise SystemExit(3)", "Failed", 3),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "Failed", -9),
    ("print('ok')", "Success", 0),
])
def test_status_rule(live_server, code, status, return_code):
    """Status rule: non-zero exit -> Failed with that code; a signal is a negative return_code."""
    body = httpx.post(f"{live_server}/run_code", json={"code": code, "language": "python"}, timeout=30).json()
    assert body["status"] == status
    assert body["run_result"]["status"] == "Finished"
    assert body["run_result"]["return_code"] == return_code


def test_files_in_and_fetch_files_out(live_server):
    """files are written (nested folders made) before the run; fetch_files returns what it wrote,
    skipping missing files and links that point outside the working directory."""
    body = httpx.post(f"{live_server}/run_code", timeout=30, json={
        "code": "import os\ndata = open('in/data.txt').read()\nopen('out.txt', 'w').write(data[::-1])\n"
                "os.symlink('/etc/hostname', 'escape.txt')",
        "language": "python",
        "files": {"in/data.txt": base64.b64encode(b"abc").decode()},
        "fetch_files": ["out.txt", "missing.txt", "escape.txt"]}).json()
    assert body["status"] == "Success", body
    assert body["files"] == {"out.txt": base64.b64encode(b"cba").decode()}


def test_fetched_files_stop_at_the_fetch_limit(local_sandbox):
    """A program-written file past ``fetch_limit_bytes`` (64 MiB) is left out, as if not written: a
    300 MB file came back whole (358 MB response, the server at 1.14 GB); a small one still does."""
    r = local_sandbox.run_code({"code": "open('big.bin', 'wb').write(b'x' * (70 << 20))\nopen('small.txt', 'w').write('ok')",
                                "language": "python", "disk_limit_MB": 256, "fetch_files": ["big.bin", "small.txt"]})
    assert r.status == "Success", r
    assert r.files == {"small.txt": base64.b64encode(b"ok").decode()}


def test_each_request_gets_a_fresh_working_directory_removed_afterwards(live_server):
    """A file written by one request is not there for the next, and the directory is gone after."""
    def post(code: str) -> dict:
        return httpx.post(f"{live_server}/run_code", json={"code": code, "language": "python"}, timeout=30).json()

    first = post("import os\nopen('left.txt', 'w').write('x')\nprint(os.getcwd())")
    assert post("import os\nprint(sorted(os.listdir('.')))")["run_result"]["stdout"] == "['main.py']\n"
    workdir = first["run_result"]["stdout"].strip()
    assert workdir.startswith("/") and not os.path.exists(workdir)


BAD_BODIES = [
    ({"language": "python"}, "code", "Field required"),
    ({"code": "1", "language": "klingon"}, "language", "'klingon' is not a language name; installed here: "),
    ({"code": "1", "language": "pyhton"}, "language", "did you mean 'python'?"),
    ({"code": "1", "language": "c++"}, "language", "did you mean 'cpp'?"),
    ({"code": "1", "language": "Ruby"}, "language", "did you mean 'ruby'?"),
    ({"code": "1", "language": "python", "run_timeout": -1}, "run_timeout", "greater than 0"),
    ({"code": "1", "language": "python", "run_timeout": "soon"}, "run_timeout", "valid number"),
    ({"code": "1", "language": "python", "memory_limit_MB": -5}, "memory_limit_MB", "greater than or equal to -1"),
    ({"code": "1", "language": "python", "files": {"/etc/passwd": ""}}, "files", "is outside the run"),
    ({"code": "1", "language": "python", "files": {"../x": ""}}, "files", "no '..'"),
    ({"code": "1", "language": "python", "files": {"a/../../x": ""}}, "files", "no '..'"),
    ({"code": "1", "language": "python", "files": {"a.txt": "%%%"}}, "files", "not valid base64"),
    ({"code": "1", "language": "python", "fetch_files": ["/etc/shadow"]}, "fetch_files", "is outside the run"),
    ({"code": "1", "language": "python", "fetch_files": ["../../etc/shadow"]}, "fetch_files", "no '..'"),
    ({"code": "1", "language": "python", "files": {".": ""}}, "files", "names a folder, not a file"),
    ({"code": "1", "language": "python", "files": {"./": ""}}, "files", "names a folder, not a file"),
    ({"code": "1", "language": "python", "files": {"a/": ""}}, "files", "names a folder, not a file"),
    ({"code": "1", "language": "python", "files": {"a": "", "a/b": ""}}, "files", "also the folder of another"),
    # the third walk: a misspelt field ran without the limit or input it meant (the typo was ignored)
    ({"code": "1", "language": "python", "run_timout": 1}, "body",
     "'run_timout' is not a field of this request; did you mean 'run_timeout'?"),
    ({"code": "1", "language": "python", "stdn": "x"}, "body", "did you mean 'stdin'?"),
    ({"code": "1", "language": "python", "memory_limit_mb": 64}, "body", "did you mean 'memory_limit_MB'?"),
]


@pytest.mark.parametrize("body, field, fix", BAD_BODIES, ids=[f"{f}-{i}" for i, (_, f, _) in enumerate(BAD_BODIES)])
def test_malformed_request_is_422_naming_the_field(live_server, body, field, fix):
    """A malformed body is HTTP 422 whose detail names the field and says what is expected."""
    r = httpx.post(f"{live_server}/run_code", json=body, timeout=30)
    assert r.status_code == 422
    errors = r.json()["detail"]
    assert any(field in err["loc"] and fix in err["msg"] for err in errors), errors


def test_a_foreign_field_is_ignored_as_sandboxfusion_ignores_it_and_no_message_has_pydantics_prefix(live_server):
    r = httpx.post(f"{live_server}/run_code", json={"code": "print(1)", "language": "python", "client_tag": "x"},
                   timeout=HTTP_TIMEOUT)
    assert r.status_code == 200 and r.json()["run_result"]["stdout"] == "1\n"
    r = httpx.post(f"{live_server}/run_code", json={"code": "1", "language": "pyhton"}, timeout=HTTP_TIMEOUT)
    assert r.json()["detail"][0]["msg"].startswith("'pyhton' is not a language name")  # not "Value error, ..."


@pytest.mark.parametrize("model, body, fix", [
    ("CreateSessionRequest", {"idle_timeot": 5}, "'idle_timeot' is not a field of this request; did you mean 'idle_timeout'?"),
    ("SessionRunRequest", {"code": "1", "timout": 5}, "did you mean 'timeout'?"),
    ("RunTestsBatchRequest", {"request": []}, "did you mean 'requests'?"),
    ("RunJupyterRequest", {"cells": ["1"], "kernal": "python3"}, "did you mean 'kernel'?"),
])
def test_every_request_body_names_a_misspelt_field(model, body, fix):
    """The misspelt-key check is the request bodies' own (``_Body``), not /run_code's alone: a session's
    ``idle_timeot`` was ignored as ``run_timout`` was."""
    import judgebox.sandbox.models as models
    from judgebox.sandbox.batch import validated

    with pytest.raises(SandboxRequestError) as info:
        validated(getattr(models, model), body)
    assert info.value.status_code == 422 and fix in str(info.value)


def test_a_file_named_like_the_program_is_422_not_a_silent_replacement(live_server):
    """``files: {"main.py": ...}`` would replace the submitted python code (it ran instead, Success)."""
    body = {"code": "print('code')", "language": "python", "files": {"main.py": "cHJpbnQoJ2ZpbGUnKQ=="}}
    r = httpx.post(f"{live_server}/run_code", json=body, timeout=30)
    assert r.status_code == 422
    assert "files: 'main.py' is the file the python program itself is written to" in r.json()["detail"][0]["msg"]


@pytest.mark.parametrize("body, field, fix", BAD_BODIES[:3] + BAD_BODIES[5:7],
                         ids=["code", "language", "run_timeout", "files-absolute", "files-dotdot"])
def test_embedded_rejects_the_same_bodies_naming_the_field(local_sandbox, body, field, fix):
    """The embedded face raises ``SandboxRequestError`` (422, a ``ValueError``) naming the same field
    in the same words as the server's 422 (issue 39, item 8: it raised pydantic's ValidationError)."""
    with pytest.raises(SandboxRequestError) as info:
        local_sandbox.run_code(body)
    assert info.value.status_code == 422 and isinstance(info.value, ValueError)
    assert str(info.value).startswith("invalid RunCodeRequest: ") and field in str(info.value)
    assert any(field in err["loc"] and fix in err["msg"] for err in info.value.__cause__.errors())


@pytest.mark.parametrize("raw, field", [
    (b'{"code": "print(1)", "language": "python", "run_timeout": NaN}', "run_timeout"),
    (b'{"code": "print(1)", "language": "python", "run_timeout": Infinity}', "run_timeout"),
    (b'{"code": "print(1)", "language": "python", "memory_limit_MB": NaN}', "memory_limit_MB"),
])
def test_non_finite_numbers_are_422_naming_the_field(live_server, raw, field):
    """NaN/Infinity (which Python's json emits) are not limits: 422 naming the field, never a 500
    (the default handler failed to render the echoed NaN) and never an accepted infinite timeout."""
    r = httpx.post(f"{live_server}/run_code", content=raw, timeout=30, headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert any(field in err["loc"] for err in r.json()["detail"]), r.text


def test_body_that_is_not_json_is_422(live_server):
    """A body that is not JSON is HTTP 422, not a 500."""
    r = httpx.post(f"{live_server}/run_code", content=b"{not json", timeout=10,
                   headers={"Content-Type": "application/json"})
    assert r.status_code == 422


def test_valid_but_uninstalled_language_is_sandbox_error_listing_installed(live_server, installed, local_sandbox):
    """A SandboxFusion language judgebox has no toolchain for ("swift") -> HTTP 200, SandboxError,
    message listing the installed languages; the official client raises it as an error."""
    body = {"code": "print(1)", "language": "swift"}
    r = httpx.post(f"{live_server}/run_code", json=body, timeout=30)
    assert r.status_code == 200
    resp = r.json()
    assert resp["status"] == "SandboxError"
    assert resp["run_result"] is None
    assert "'swift' is not installed" in resp["message"]
    assert all(name in resp["message"] for name in installed)
    assert local_sandbox.run_code(body).message == resp["message"]
    with pytest.raises(Exception, match="not installed"):
        sandbox_fusion.run_code(sandbox_fusion.RunCodeRequest(**body), endpoint=live_server, max_attempts=1)


def test_embedded_and_http_faces_agree(live_server):
    """LocalSandbox and the server return the same fields and values for the same request."""
    body = {"code": "import sys\nprint(sys.stdin.read().upper(), end='')", "language": "python", "stdin": "héllo"}
    http = httpx.post(f"{live_server}/run_code", json=body, timeout=30).json()
    local = json.loads(LocalSandbox().run_code(body).model_dump_json())
    for resp in (http, local):
        resp["run_result"].pop("execution_time")
        resp["run_result"].pop("cpu_time")
    assert http == local
    assert http["run_result"]["stdout"] == "HÉLLO"


def test_case_files_never_follow_a_link_planted_by_an_earlier_run(local_sandbox, tmp_path):
    """run_tests: a case's files are written only inside the working directory. A link planted by
    the previous case is removed with the rest of its files before the next case (which made that
    case a SandboxError before cases were reset); nothing is ever written outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    code = f"import os\nprint(os.path.islink('d'))\nif not os.path.exists('d'):\n    os.symlink({str(outside)!r}, 'd')"
    evil = base64.b64encode(b"x").decode()
    r = local_sandbox.run_tests({"code": code, "language": "python",
                                 "cases": [{}, {"files": {"d/sub/evil.txt": evil}}]})
    assert (r.status, [x.stdout for x in r.run_results]) == ("Success", ["False\n", "False\n"])
    assert list(outside.iterdir()) == []


def test_a_link_planted_in_the_working_folder_is_never_followed_by_the_writer(tmp_path):
    """write_files never follows what the run left: a link on the way becomes a real folder, a link,
    FIFO or folder at a file's name is replaced by the file; nothing outside is touched and nothing
    blocks (an open of a FIFO without a reader would wait forever)."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (work / "d").symlink_to(outside)
    (work / "in.txt").symlink_to(outside / "target.txt")
    os.mkfifo(work / "fifo.txt")
    (work / "dir.txt").mkdir()
    runfs.write_files(str(work), {"d/sub/evil.txt": b"x", "in.txt": b"a", "fifo.txt": b"b", "dir.txt": b"c"})
    assert list(outside.iterdir()) == []
    assert (work / "d").is_dir() and not (work / "d").is_symlink() and (work / "d/sub/evil.txt").read_bytes() == b"x"
    assert [(work / n).read_bytes() for n in ("in.txt", "fifo.txt", "dir.txt")] == [b"a", b"b", b"c"]
    assert all((work / n).is_file() and not (work / n).is_symlink() for n in ("in.txt", "fifo.txt", "dir.txt"))


def test_fetch_skips_what_is_not_a_regular_file_and_keeps_one_budget(tmp_path):
    """fetch_files naming a folder gave HTTP 500 and leaked the descriptor (pinning the run's tmpfs);
    a FIFO, a socket or a link is skipped too. One budget covers every call it is passed to."""
    (tmp_path / "out.txt").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "a.bin")
    (tmp_path / "a.bin").write_bytes(b"x" * 60)
    before = len(os.listdir("/proc/self/fd"))
    assert runfs.fetch(str(tmp_path), ["out.txt", "fifo", "link"], 1 << 20) == {}
    assert len(os.listdir("/proc/self/fd")) == before
    budget = runfs.FetchBudget(100)
    assert list(runfs.fetch(str(tmp_path), ["a.bin"], budget)) == ["a.bin"]
    assert runfs.fetch(str(tmp_path), ["a.bin"], budget) == {} and budget.left == 20  # 60 bytes sent as 80


def test_args_are_appended_to_the_run_command(live_server):
    """SandboxFusion's ``args`` field: extra run arguments (here pytest's ``-x`` stops at the first failure)."""
    code = "def test_a():\n    assert 0\n\ndef test_b():\n    assert 0\n"
    body = httpx.post(f"{live_server}/run_code", timeout=60,
                      json={"code": code, "language": "pytest", "args": ["-x"]}).json()
    assert body["status"] == "Failed"
    assert "1 failed" in body["run_result"]["stdout"]
    assert "stopping after 1 failures" in body["run_result"]["stdout"]


@pytest.mark.parametrize("size", [10, 300 << 10], ids=["cached", "over-the-cache-size"])
def test_file_contents_decode_alike_and_bad_base64_stays_refused_when_repeated(local_sandbox, size):
    """Contents up to 256 KiB of base64 decode through a cache: a repeated content gives the same
    bytes to the program, and a repeated bad content is refused every time (no error is cached)."""
    data = bytes(range(256)) * (size // 256 + 1)
    content = base64.b64encode(data).decode()
    code = "import hashlib; print(hashlib.sha256(open('d.bin', 'rb').read()).hexdigest())"
    for _ in range(2):
        out = local_sandbox.run_code({"code": code, "language": "python", "files": {"d.bin": content}})
        assert out.run_result.stdout.strip() == hashlib.sha256(data).hexdigest()
    for _ in range(2):
        with pytest.raises(SandboxRequestError, match="not valid base64"):
            local_sandbox.run_code({"code": "1", "language": "python", "files": {"d.bin": content[:-2] + "%%"}})


def test_a_misspelt_language_on_the_embedded_face_is_the_servers_422_not_pydantics_error(local_sandbox):
    """Issue 39, item 8: ``LocalSandbox`` raised pydantic's ``ValidationError`` for a misspelt language
    while HTTP answered a clean 422; now ``SandboxRequestError`` (a ``ValueError``, status 422) naming
    the field, as the client words the same request."""
    from judgebox.sandbox.client import SandboxClient

    with pytest.raises(SandboxRequestError) as embedded:
        local_sandbox.run_code({"code": "print(1)", "language": "pyhton"})
    with pytest.raises(SandboxRequestError) as client:
        SandboxClient("http://127.0.0.1:9").run_code({"code": "print(1)", "language": "pyhton"})  # refused before sending
    assert embedded.value.status_code == client.value.status_code == 422
    assert str(embedded.value) == str(client.value)
    assert str(embedded.value).startswith("invalid RunCodeRequest: language: ") and "pyhton" in str(embedded.value)
    with pytest.raises(SandboxRequestError, match="invalid session: language"):
        local_sandbox.create_session(language="ruby")
