"""File names a request cannot have are a malformed request (audit finding 11): HTTP 422 on
``judgebox serve`` and ``SandboxRequestError`` (422) on the embedded face, each naming the field
and the fix. Before, a name over 255 bytes, a path over 4095 bytes or a file under the program's
own file (``main.py/x``) was HTTP 500 (which the client retries as a server fault), and the same in
a case's files was a ``SandboxError`` (reward masked as ``infra_error``). The longest names Linux
allows are still written, read and fetched."""

from __future__ import annotations

import base64

import httpx
import pytest

from judgebox.sandbox.errors import SandboxRequestError

X = base64.b64encode(b"x").decode()
LONGEST = "/".join(["a" * 255] * 16)  # 4095 bytes: 255-byte names, the longest path a request may give


def py(**body):
    return {"code": "print(1)", "language": "python", **body}


BAD = {
    # id: (endpoint, body, field named in the message, the fix it states)
    "name-over-255-bytes": ("run_code", py(files={"a" * 256: X}), "files: the name", "longer than the 255 bytes"),
    "name-over-255-utf8-bytes": ("run_code", py(files={"é" * 128: X}), "files: the name", "is 256 bytes"),
    "path-over-4095-bytes": ("run_code", py(files={LONGEST + "/b": X}), "files: a path of 4097 bytes",
                             "longer than the 4095 bytes"),
    "under-the-source": ("run_code", py(files={"main.py/x": X}), "files: 'main.py/x' lies under 'main.py'",
                         "put it in another folder"),
    "fetch-name-over-255": ("run_code", py(fetch_files=["d/" + "a" * 256]), "fetch_files: the name", "shorten it"),
    "case-name-over-255": ("run_tests", py(cases=[{"files": {"a" * 256: X}}]), "cases[].files: the name",
                           "shorten it"),
    "case-fetch-over-4095": ("run_tests", py(cases=[{"fetch_files": [LONGEST + "/b"]}]),
                             "cases[].fetch_files: a path of", "shorten"),
    "case-replaces-the-source": ("run_tests", py(cases=[{"files": {"main.py": X}}]),
                                 "cases[0].files: 'main.py' is the file the python program itself",
                                 "rename that file"),
    "case-under-the-source": ("run_tests", py(cases=[{}, {"files": {"main.py/x": X}}]),
                              "cases[1].files: 'main.py/x' lies under 'main.py'", "put it in another folder"),
    "case-under-the-compiled-program": ("run_tests", {"code": "int main() {}", "language": "cpp",
                                                      "cases": [{"files": {"main/x": X}}]},
                                        "cases[0].files: 'main/x' lies under 'main'", "put it in another folder"),
    "case-under-a-request-file": ("run_tests", py(files={"d": X}, cases=[{"files": {"d/x": X}}]),
                                  "cases[0].files: 'd/x' lies under 'd', a file of the request's files",
                                  "rename one of them"),
    "case-is-a-request-folder": ("run_tests", py(files={"d/x": X}, cases=[{"files": {"d": X}}]),
                                 "cases[0].files: 'd' is a folder of the request's files", "rename it"),
}


@pytest.mark.parametrize("endpoint, body, field, fix", BAD.values(), ids=BAD)
def test_a_bad_file_name_is_422_naming_the_field(live_server, endpoint, body, field, fix):
    """Over HTTP: status 422 (was 500, or 200 with ``SandboxError`` for a case's files)."""
    r = httpx.post(f"{live_server}/{endpoint}", json=body, timeout=60)
    assert r.status_code == 422, r.text[:300]
    msgs = [err["msg"] for err in r.json()["detail"]]
    assert any(field in m and fix in m for m in msgs), msgs


@pytest.mark.parametrize("endpoint, body, field, fix", BAD.values(), ids=BAD)
def test_the_embedded_sandbox_rejects_the_same_names(local_sandbox, endpoint, body, field, fix):
    """Embedded: a ``SandboxRequestError`` (422) with the same message (was ``OSError``/``FileExistsError``
    from deep in the executor, or a ``SandboxError`` response; then pydantic's ``ValidationError``)."""
    with pytest.raises(SandboxRequestError) as info:
        getattr(local_sandbox, endpoint)(body)
    assert info.value.status_code == 422
    msgs = [err["msg"] for err in info.value.__cause__.errors()]
    assert any(field in m and fix in m for m in msgs), msgs
    assert field in str(info.value) and fix in str(info.value)


def test_the_longest_path_is_written_read_and_fetched(local_sandbox):
    """The limits are Linux's own: 255-byte names making a 4095-byte path are written before the
    run (whatever the length of the working folder's own path), read by the program, restored
    between cases, and a program's output at such a path is fetched."""
    out = LONGEST[:-255] + "b" * 255
    code = f"print(open({LONGEST!r}).read())\nopen({LONGEST!r}, 'w').write('changed')\nopen({out!r}, 'w').write('out')\n"
    r = local_sandbox.run_tests({"code": code, "language": "python", "files": {LONGEST: X},
                                 "cases": [{}, {"fetch_files": [out]}]})
    assert r.status == "Success", (r.message, r.run_results)
    assert [x.stdout for x in r.run_results] == ["x\n", "x\n"]
    assert r.run_results[1].files == {out: base64.b64encode(b"out").decode()}


def test_a_case_file_may_still_replace_a_request_file(local_sandbox):
    """What stays allowed: a case's file of the same name as a request file replaces it for that
    case only."""
    code = "print(open('d/in.txt').read())"
    r = local_sandbox.run_tests({"code": code, "language": "python", "files": {"d/in.txt": X},
                                 "cases": [{"files": {"d/in.txt": base64.b64encode(b"y").decode()}}, {}]})
    assert [x.stdout for x in r.run_results] == ["y\n", "x\n"]


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_absolute_paths_under_the_runs_own_mounts_are_written_and_fetched(run_code):
    """SandboxFusion's own case: ``fetch_files: ["a.txt", "/mnt/b"]`` returns both, keyed as given
    (was HTTP 422); a request file at ``/tmp/in.txt`` is there for the program."""
    code = ("open('a.txt', 'w').write('secret'); open('/mnt/b', 'w').write('sauce')\n"
            "print(open('/tmp/in.txt').read())")
    r = run_code({"code": code, "language": "python", "files": {"/tmp/in.txt": b64("given")},
                  "fetch_files": ["a.txt", "/mnt/b", "/dev/shm/never-written"]})
    assert (r.status, r.run_result.stdout) == ("Success", "given\n"), r
    assert r.files == {"a.txt": b64("secret"), "/mnt/b": b64("sauce")}


def test_absolute_request_files_are_there_for_every_case(local_sandbox):
    """Each case starts with the scratch mounts emptied and the request's absolute files written
    again; a case's own ``/mnt`` output is fetched for that case."""
    code = ("import sys\nprint(open('/var/tmp/in.txt').read())\nopen('/var/tmp/in.txt', 'w').write('changed')\n"
            "open('/mnt/out', 'w').write(sys.stdin.read())")
    r = local_sandbox.run_tests({"code": code, "language": "python", "files": {"/var/tmp/in.txt": b64("x")},
                                 "cases": [{"stdin": "1", "fetch_files": ["/mnt/out"]},
                                           {"stdin": "2", "fetch_files": ["/mnt/out"]}]})
    assert [x.stdout for x in r.run_results] == ["x\n", "x\n"], r
    assert [x.files for x in r.run_results] == [{"/mnt/out": b64("1")}, {"/mnt/out": b64("2")}]


@pytest.mark.parametrize("field, body", [
    ("fetch_files", py(fetch_files=["/etc/passwd"])),
    ("fetch_files", py(fetch_files=["/tmp/../etc/passwd"])),
    ("files", py(files={"/root/x": X})),
    ("files", py(files={"/mnt": X})),
    ("cases[].fetch_files", py(cases=[{"fetch_files": ["/proc/self/environ"]}])),
], ids=["etc", "climbs-out-of-tmp", "root", "the-mount-itself", "case-proc"])
def test_other_absolute_paths_are_422_naming_the_field(live_server, field, body):
    endpoint = "run_tests" if "cases" in body else "run_code"
    r = httpx.post(f"{live_server}/{endpoint}", json=body, timeout=60)
    assert r.status_code == 422, r.text[:300]
    msgs = [err["msg"] for err in r.json()["detail"]]
    assert any(f"{field}: " in m and "is outside the run" in m and "/tmp, /var/tmp, /dev/shm, /mnt" in m
               for m in msgs), msgs


def test_absolute_paths_under_minimal_isolation_are_refused():
    """Without a private view, ``/tmp`` is the host's: every absolute path is a 422 naming the field."""
    from judgebox.sandbox import LocalSandbox
    from judgebox.sandbox.errors import SandboxRequestError

    from .test_isolation import reachable_python

    sandbox = LocalSandbox(python=reachable_python(), isolation="minimal")
    with pytest.raises(SandboxRequestError, match=r"fetch_files: '/mnt/b' is an absolute path.*--isolation minimal"):
        sandbox.run_code(py(fetch_files=["/mnt/b"]))
    with pytest.raises(SandboxRequestError, match=r"files: '/tmp/x' is an absolute path"):
        sandbox.run_code(py(files={"/tmp/x": X}))
    with pytest.raises(SandboxRequestError, match=r"cases\[1\]\.fetch_files: '/tmp/y'"):
        sandbox.run_tests(py(cases=[{}, {"fetch_files": ["/tmp/y"]}]))
