"""``/run_tests``'s ``tests_program`` (issue 38): a second program, compiled apart in ``tests/``, made
read-only for the run, that each case runs with ``--`` and the code's command; the code runs only when
the tests start it. Real compiles and runs in the embedded sandbox, and one over HTTP."""

from __future__ import annotations

import os

import httpx
import pytest

from judgebox.sandbox.models import RunTestsRequest

LAUNCHER = r"""
#include <cstdio>
#include <string>
#include <unistd.h>
#include <sys/wait.h>
int main(int argc, char** argv) {
    int i = 1;
    while (i < argc && std::string(argv[i]) != "--") i++;
    char here[512];
    if (!getcwd(here, sizeof here)) return 2;
    std::printf("tests in %s; code argv: %s\n", std::string(here).substr(std::string(here).rfind('/')).c_str(),
                i + 1 < argc ? argv[i + 1] : "none");
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) { if (chdir("..") != 0) _exit(126); execv(argv[i + 1], argv + i + 1); _exit(127); }
    int status = 0;
    waitpid(pid, &status, 0);
    std::printf("code exited %d; tests writable: %s\n", WEXITSTATUS(status), access("main", W_OK) == 0 ? "yes" : "no");
}
"""
CODE = r"""
#include <cstdio>
int main() {
    FILE* f = std::fopen("tests/main", "r+");
    std::printf("code here; tests binary writable: %s\n", f ? "yes" : "no");
    return 3;
}
"""


def test_the_tests_program_runs_first_and_starts_the_code(local_sandbox):
    r = local_sandbox.run_tests(RunTestsRequest(code=CODE, language="cpp", tests_program=LAUNCHER,
                                                cases=[{"stdin": ""}, {"stdin": ""}]))
    assert r.status.value == "Success", r
    assert r.tests_compile_result.return_code == 0 and r.compile_result.return_code == 0
    for case in r.run_results:
        assert case.stdout == ("tests in /tests; code argv: ./main\ncode here; tests binary writable: no\n"
                               "code exited 3; tests writable: no\n")


def test_a_tests_program_that_does_not_compile_runs_nothing_and_says_whose_it_is(local_sandbox):
    r = local_sandbox.run_tests(RunTestsRequest(code=CODE, language="cpp", tests_program="int main( {",
                                                cases=[{"stdin": ""}]))
    assert (r.status.value, r.run_results) == ("Failed", [None])
    assert r.compile_result.return_code == 0 and r.tests_compile_result.return_code != 0
    assert "tests_program" in r.message and "the tests'" in r.message


def test_an_interpreted_tests_program_starts_the_code_too(local_sandbox):
    tests = ("import os, subprocess, sys\n"
             "code = sys.argv[sys.argv.index('--') + 1:]\n"
             "out = subprocess.run(code, cwd='..', capture_output=True, text=True).stdout\n"
             "print(os.path.basename(os.getcwd()), code[-1], out.strip())\n")
    r = local_sandbox.run_tests(RunTestsRequest(code="print('code')", language="python", tests_program=tests,
                                                cases=[{"stdin": ""}]))
    assert r.run_results[0].stdout == "tests main.py code\n", r


def test_tests_language_runs_the_tests_program_in_another_language(local_sandbox):
    """``tests_language``: Python tests of a C++ program; the tests start the compiled code."""
    r = local_sandbox.run_tests(RunTestsRequest(code=CODE, language="cpp", tests_language="python",
                                                tests_program=STARTER["python"], cases=[{"stdin": ""}]))
    assert r.status.value == "Success" and r.tests_compile_result is None, r
    assert r.run_results[0].stdout == "code here; tests binary writable: no\n"


def test_tests_language_without_a_tests_program_is_refused():
    with pytest.raises(ValueError, match="tests_language: it names the language of tests_program, and there is none"):
        RunTestsRequest(code="print(1)", language="python", tests_language="nodejs", cases=[{"stdin": ""}])
    with pytest.raises(ValueError, match="tests_language"):
        RunTestsRequest(code="print(1)", language="python", tests_program="x", tests_language="cobol",
                        cases=[{"stdin": ""}])


#: The code's program, a child of the tests' process: what it can open of its parent under /proc.
PEEK = {
    "python": ("import os\n"
               "for what in ('environ', 'mem', 'fd/1', 'maps'):\n"
               "    try:\n"
               "        open(f'/proc/{os.getppid()}/{what}', 'wb' if what == 'fd/1' else 'rb').close()\n"
               "        print(what, 'opened')\n"
               "    except OSError as exc:\n"
               "        print(what, 'denied')\n"),
    "java": ("public class Peek { public static void main(String[] a) {\n"
             "  long parent = ProcessHandle.current().parent().get().pid();\n"
             "  for (String what : new String[] {\"environ\", \"mem\", \"fd/1\", \"maps\"}) {\n"
             "    try { java.io.File f = new java.io.File(\"/proc/\" + parent + \"/\" + what);\n"
             "      if (what.equals(\"fd/1\")) new java.io.FileOutputStream(f).close(); else new java.io.FileInputStream(f).close();\n"
             "      System.out.println(what + \" opened\");\n"
             "    } catch (java.io.IOException e) { System.out.println(what + \" denied\"); } } } }\n"),
}
#: The tests' program: starts the code (the command after ``--``) in the working folder, prints its output.
STARTER = {
    "python": ("import subprocess, sys\n"
               "code = sys.argv[sys.argv.index('--') + 1:]\n"
               "print(subprocess.run(code, cwd='..', capture_output=True, text=True).stdout, end='')\n"),
    "java": ("public class Tests { public static void main(String[] a) throws Exception {\n"
             "  int i = java.util.Arrays.asList(a).indexOf(\"--\");\n"
             "  Process p = new ProcessBuilder(java.util.Arrays.copyOfRange(a, i + 1, a.length))\n"
             "      .directory(new java.io.File(\"..\")).redirectErrorStream(true).start();\n"
             "  System.out.print(new String(p.getInputStream().readAllBytes())); p.waitFor(); } }\n"),
}


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="a tests' program is sealed by a root server only")
@pytest.mark.parametrize("language", ["python", "java"])
def test_an_interpreted_tests_program_is_closed_to_the_code_it_starts(local_sandbox, language):
    """The tests' interpreter (Python, the JVM) runs non-dumpable: the code's process, same uid, can
    open none of its /proc files (its memory holds the nonce, its stdout is the verdict's)."""
    r = local_sandbox.run_tests(RunTestsRequest(code=PEEK[language], language=language,
                                                tests_program=STARTER[language], cases=[{"stdin": ""}]))
    assert r.run_results[0].stdout == "environ denied\nmem denied\nfd/1 denied\nmaps denied\n", r


def test_request_files_may_not_lie_in_the_tests_folder():
    with pytest.raises(ValueError, match=r"files: 'tests/x' lies in 'tests'"):
        RunTestsRequest(code="print(1)", language="python", tests_program="print(2)", files={"tests/x": ""},
                        cases=[{"stdin": ""}])
    with pytest.raises(ValueError, match=r"cases\[0\]\.files: 'tests' lies in 'tests'"):
        RunTestsRequest(code="print(1)", language="python", tests_program="print(2)",
                        cases=[{"stdin": "", "files": {"tests": ""}}])
    RunTestsRequest(code="print(1)", language="python", files={"tests/x": ""}, cases=[{"stdin": ""}])


@pytest.mark.server
def test_tests_program_over_http(live_server):
    r = httpx.post(f"{live_server}/run_tests", json={"code": CODE, "language": "cpp", "tests_program": LAUNCHER,
                                                         "cases": [{"stdin": ""}]}, timeout=120).json()
    assert r["status"] == "Success" and r["tests_compile_result"]["return_code"] == 0
    assert r["run_results"][0]["stdout"].endswith("code exited 3; tests writable: no\n")
