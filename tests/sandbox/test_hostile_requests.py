"""Hostile requests and compile steps: the server's own work on a run's folder never blocks, never
follows what the run planted, never turns the run's doing into ``SandboxError`` and never holds
memory the request does not bound; malformed text is HTTP 422, never 500.

Java's ``javac`` runs annotation processors it finds on the class path: a request that ships one
runs its own code during the compile step (inside the sandbox), which is how these attacks plant a
FIFO, a link or sparse files before the server writes a case's files or takes the case snapshot.
"""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import uuid

import httpx
import pytest

from tests.conftest import FACES, HTTP_TIMEOUT

PROCESSOR = r'''
import javax.annotation.processing.*; import javax.lang.model.SourceVersion;
import javax.lang.model.element.TypeElement; import java.util.Set;
@SupportedAnnotationTypes("*") public class P extends AbstractProcessor {
  static boolean done = false;
  public SourceVersion getSupportedSourceVersion() { return SourceVersion.latestSupported(); }
  public boolean process(Set<? extends TypeElement> a, RoundEnvironment r) {
    if (done) return false; done = true;
    try { new ProcessBuilder("bash", "ap_cmd.sh").inheritIO().start().waitFor(); } catch (Exception e) {}
    return false; } }
'''
WRONG = 'public class Main { public static void main(String[] a) { System.out.println("wrong"); System.exit(1); } }'


def b64(data) -> str:
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()


@pytest.fixture(scope="module")
def processor(tmp_path_factory) -> str:
    """``P.class``, an annotation processor that runs ``bash ap_cmd.sh`` while javac compiles."""
    if not shutil.which("javac"):
        pytest.skip("javac is not installed")
    d = tmp_path_factory.mktemp("ap")
    (d / "P.java").write_text(PROCESSOR)
    subprocess.run(["javac", "P.java"], cwd=d, check=True, capture_output=True)
    return b64((d / "P.class").read_bytes())


def compile_runs(processor: str, command: str, **body) -> dict:
    files = {"P.class": processor, "META-INF/services/javax.annotation.processing.Processor": b64("P\n"),
             "ap_cmd.sh": b64(f"# {uuid.uuid4()}\n{command}\n")}  # unique: no compile-cache hit
    return {"language": "java", "compile_timeout": 60, "run_timeout": 10, "code": WRONG, "files": files, **body}


@pytest.fixture(params=FACES)
def run_tests(request, local_sandbox):
    if request.param == "embedded":
        return lambda body: local_sandbox.run_tests(body).model_dump(mode="json")
    url = request.getfixturevalue("live_server")
    return lambda body: httpx.post(f"{url}/run_tests", json=body, timeout=120).json()


@pytest.mark.slow
@pytest.mark.parametrize("plant", ["mkfifo in.txt", "ln -s /etc/hostname in.txt", "mkdir in.txt"])
def test_a_case_file_replaces_what_the_compile_step_planted(processor, run_tests, plant):
    """A FIFO at a case file's name hung a server slot for good (the open waited for a reader; SIGTERM
    could not stop the server); a link or a folder made a wrong answer SandboxError. The case's file
    replaces whatever is there, and the run's own result comes back."""
    body = compile_runs(processor, plant, cases=[{"files": {"in.txt": b64("1 2\n")}}, {}])
    r = run_tests(body)
    assert r["status"] == "Failed", r["message"]
    assert [(x["status"], x["return_code"], x["stdout"]) for x in r["run_results"]] == [("Finished", 1, "wrong\n")] * 2


def test_sparse_files_left_by_the_compile_step_do_not_fill_the_server(processor, local_sandbox):
    """A compile step that left 6 sparse files of 250 MiB (no disk used) took the server to 1.5 GiB:
    the case snapshot read them whole. Past 256 MiB of files it is now the compile step's failure."""
    body = compile_runs(processor, "for i in 1 2 3 4 5 6; do truncate -s 250M sparse$i; done", cases=[{}, {}])
    r = local_sandbox.run_tests(body)
    assert r.status == "Failed" and r.run_results == [None, None]
    assert r.compile_result.return_code == 1 and "cases cannot start from it" in r.compile_result.stderr


def test_fetching_a_folder_is_skipped_not_a_server_error(run_code):
    """``fetch_files`` naming a folder the program made gave HTTP 500 and leaked a descriptor that
    pinned the run's tmpfs; it is left out, as any other non-file."""
    r = run_code({"code": "import os\nos.mkdir('out.txt')\nopen('ok.txt', 'w').write('x')", "language": "python",
                  "fetch_files": ["out.txt", "ok.txt"]})
    assert r.status == "Success" and r.files == {"ok.txt": b64("x")}


def test_fetch_limit_is_one_budget_for_the_whole_request(local_sandbox):
    """The 64 MiB fetch limit applied per case: 8 cases returned 480 MiB. It is the request's, all
    its cases and its own fetch_files together, counted as sent (base64: 5 MiB holds three 1 MiB files)."""
    sandbox = local_sandbox.__class__(fetch_limit_bytes=5 << 20)
    code = "open('out.bin', 'wb').write(b'x' * (1 << 20))"
    r = sandbox.run_tests({"code": code, "language": "python", "fetch_files": ["out.bin"],
                           "cases": [{"fetch_files": ["out.bin"]} for _ in range(5)]})
    fetched = [bool(x.files) for x in r.run_results]
    assert fetched == [True, True, True, False, False]


@pytest.mark.parametrize("field, body", [
    ("code", {"code": "print('\ud800')", "language": "python"}),
    ("stdin", {"code": "print(input())", "language": "python", "stdin": "\ud800"}),
    ("args", {"code": "echo $1", "language": "bash", "args": ["a\u0000b"]}),
    ("args", {"code": "echo $1", "language": "bash", "args": ["\ud800"]}),
])
def test_text_no_program_can_receive_is_422(live_server, field, body):
    """A lone surrogate in code, stdin or an argument, or a NUL in an argument, gave HTTP 500
    (UnicodeEncodeError, embedded null byte); it is 422 naming the field."""
    r = httpx.post(f"{live_server}/run_code", content=_json_with_surrogates(body),
                   headers={"content-type": "application/json"}, timeout=30)
    assert r.status_code == 422, r.text
    assert field in r.text


def _json_with_surrogates(body: dict) -> bytes:
    import json

    return json.dumps(body, ensure_ascii=True).encode()


@pytest.mark.parametrize("face", FACES)
def test_an_unknown_key_of_a_case_is_422_not_a_passed_run(face, request, local_sandbox):
    """A new user's finding: ``{"stdin": "1", "expected_output": "999"}`` was answered ``Success``
    (the key ignored: /run_tests compares nothing) and ``{"input": "1"}`` ran with no stdin."""
    from judgebox.sandbox.errors import SandboxRequestError

    body = {"code": "print(input())", "language": "python", "cases": [{"stdin": "1\n", "expected_output": "999\n"}]}
    says = "not a field of a case (a case has stdin, files and fetch_files"
    if face == "embedded":
        with pytest.raises(SandboxRequestError, match=re.escape(f"cases.0.expected_output: {says}")):
            local_sandbox.run_tests(body)
    else:
        r = httpx.post(f"{request.getfixturevalue('live_server')}/run_tests", json=body, timeout=HTTP_TIMEOUT)
        assert r.status_code == 422, r.text
        [error] = r.json()["detail"]
        assert error["loc"] == ["body", "cases", 0, "expected_output"] and error["msg"].startswith(says), error
