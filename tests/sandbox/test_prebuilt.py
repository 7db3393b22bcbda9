"""Prebuilt artifacts: a precompiled ``bits/stdc++.h`` used for the default flags and a javac
class-data archive, never a change in what a program does.

They are built once per machine under the default ``workdir_root`` (the header is about 100 MiB and
a few seconds of CPU), like the server does; the differential test compiles each program with the
header and with prebuilt artifacts off and compares the runs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess

import pytest

from judgebox.sandbox import LocalSandbox
from judgebox.sandbox.languages import RECIPES
from judgebox.sandbox.speedups.jvm import javac_key
from judgebox.sandbox.speedups.pch import lead_headers, pch_flags, pch_key

needs_gpp = pytest.mark.skipif(not shutil.which("g++"), reason="g++ not installed")

DEFAULT_ARGV = RECIPES["cpp"].argv(RECIPES["cpp"].compile, "", "python3")


@pytest.fixture(scope="module")
def with_pch() -> LocalSandbox:
    if not shutil.which("g++"):
        pytest.skip("g++ not installed")
    sb = LocalSandbox(compile_cache_MB=0)
    assert sb.executor.pch.ensure(pch_key(DEFAULT_ARGV)).result(timeout=1800)
    return sb


def test_flags_of_a_compile_command():
    assert pch_flags(["g++", "-O2", "-std=gnu++20", "-pipe", "-o", "main", "main.cpp"]) == ("-O2", "-std=gnu++20", "-pipe")
    assert pch_flags(["rustc", "-O", "main.rs"]) is None


def test_default_flags_use_the_precompiled_header(with_pch, tmp_path):
    _, folder = with_pch.executor.pch.ensure(pch_key(DEFAULT_ARGV)).result()
    gch = os.path.join(folder, "bits", "stdc++.h.gch")
    assert with_pch.executor.speedups(DEFAULT_ARGV) == ["-I", folder]
    st = os.stat(gch)
    assert stat.S_IMODE(st.st_mode) == 0o644 and st.st_uid == os.geteuid()  # run uids read, never write
    (tmp_path / "main.cpp").write_text("#include <bits/stdc++.h>\nint main() { std::cout << 1; }\n")
    out = subprocess.run([*DEFAULT_ARGV, "-I", folder, "-H"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert f"! {gch}" in out.stderr.splitlines()  # "!": a valid precompiled header was used


def test_other_flags_get_their_own_header(with_pch):
    cpp17 = ["g++", "-O2", "-std=c++17", "-pipe", "-o", "main", "main.cpp"]  # a request's cpp_std
    other = with_pch.executor.pch.ensure(pch_key(cpp17)).result(timeout=1800)
    assert other and other != with_pch.executor.pch.ensure(pch_key(DEFAULT_ARGV)).result()


def test_lead_headers_are_the_standard_block_before_bits_stdcpp():
    assert lead_headers("#include<assert.h>\n#include<bits/stdc++.h>\nint main() {}\n") == ("assert.h",)  # MultiPL-E
    assert lead_headers("// x\n/* y */\n#include <cstdio>\n  # include <vector> // v\n\n#include <bits/stdc++.h>\n") == \
        ("cstdio", "vector")
    assert lead_headers("#include <bits/stdc++.h>\n") == ()  # the plain precompiled header serves it
    for code in ("#include <assert.h>\n#define X 1\n#include <bits/stdc++.h>\n",  # a directive between
                 "#include \"mine.h\"\n#include <bits/stdc++.h>\n",  # a quoted include: the program's own
                 "#include <sys/mman.h>\n#include <bits/stdc++.h>\n",  # not a known standard header
                 "// a comment ending in a backslash \\\n#include <vector>\n#include <bits/stdc++.h>\n",
                 "#include <vector> ??/\n#include <bits/stdc++.h>\n",  # a trigraph
                 "#include <assert.h>\nint x;\n#include <bits/stdc++.h>\n",
                 "#include <assert.h>\nint main() { std::vector<int> v; }\n"):
        assert lead_headers(code) == (), code


PROGRAMS = {
    "plain": "#include <bits/stdc++.h>\nusing namespace std;\n"
             "int main() { vector<int> v{3, 1, 2}; sort(v.begin(), v.end()); cout << v[0] << v[2] << endl; }\n",
    # debug mode defined before the header: the precompiled one (built without it) must not be used
    "glibcxx_debug": "#define _GLIBCXX_DEBUG\n#include <bits/stdc++.h>\n"
                     "int main() { std::vector<int> v(2); std::cout << \"x\" << std::endl; return v[5]; }\n",
    "pragma_target": "#pragma GCC target(\"avx2\")\n#include <bits/stdc++.h>\n"
                     "int main() { long long x = 0xF0F0; std::cout << __builtin_popcountll(x) << std::endl; }\n",
    "pragma_optimize": "#pragma GCC optimize(\"O3,unroll-loops\")\n#include <bits/stdc++.h>\n"
                       "int main() { long long s = 0; for (int i = 0; i < 1000; i++) s += i; std::cout << s << std::endl; }\n",
    "header_not_first": "#include <cstdio>\n#include <bits/stdc++.h>\nint main() { std::printf(\"%zu\\n\", std::string(\"abc\").size()); }\n",
    "int_long_long": "#include <bits/stdc++.h>\n#define int long long\nusing namespace std;\n"
                     "signed main() { int x = 1LL << 40; cout << x << endl; }\n",
    # MultiPL-E's opening: its own precompiled block; assert still works, and reports the program's line
    "assert_first": "#include<assert.h>\n#include<bits/stdc++.h>\n#include<assert.h>\n"
                    "int main() { std::cout << __LINE__ << std::endl; assert(std::vector<int>{1}.size() == 2); }\n",
}


def ready(sb: LocalSandbox, code: str) -> list[str]:
    """The options of ``code``'s precompiled header once it is built."""
    return sb.executor.pch.ensure(pch_key(DEFAULT_ARGV, code)).result(timeout=1800)


@pytest.mark.slow
def test_a_leading_block_of_standard_headers_gets_its_own_precompiled_header(with_pch, tmp_path):
    code = PROGRAMS["assert_first"]
    args = ready(with_pch, code)
    assert args[0] == "-include" and args[1].endswith("/lead.h")
    assert with_pch.executor.speedups(DEFAULT_ARGV, code) == args
    (tmp_path / "main.cpp").write_text(code)
    out = subprocess.run([*DEFAULT_ARGV, *args, "-H"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert f"! {args[1]}.gch" in out.stderr.splitlines()  # "!": a valid precompiled header was used


@pytest.mark.slow
def test_a_missing_include_is_still_a_compile_error_when_a_lead_header_is_precompiled(with_pch):
    ready(with_pch, PROGRAMS["assert_first"])
    r = with_pch.run_code({"code": "#include <assert.h>\nint main() { std::vector<int> v; }\n", "language": "cpp"})
    assert r.status == "Failed" and r.compile_result.return_code == 1
    assert "main.cpp:2:19: error: \u2018vector\u2019 is not a member of \u2018std\u2019" in r.compile_result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_precompiled_header_never_changes_a_program(with_pch, name):
    without = LocalSandbox(prebuilt_artifacts=False, compile_cache_MB=0)
    ready(with_pch, PROGRAMS[name])
    body = {"code": PROGRAMS[name], "language": "cpp", "compile_timeout": 300}
    a, b = with_pch.run_code(body), without.run_code(body)
    assert a.compile_result.return_code == b.compile_result.return_code == 0, (a, b)
    assert (a.status, a.run_result.stdout, a.run_result.return_code) == \
        (b.status, b.run_result.stdout, b.run_result.return_code)
    if name == "glibcxx_debug":  # the debug-mode check ran: the real header was used
        assert a.run_result.return_code != 0 and "Error" in a.run_result.stderr
    if name == "assert_first":  # the failed assert names the program's own line
        assert a.run_result.stdout == "4\n" and "main.cpp:4: int main(): Assertion" in a.run_result.stderr


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("javac"), reason="javac not installed")
def test_javac_archive_is_used_and_classes_are_identical(tmp_path):
    sb = LocalSandbox(compile_cache_MB=0)
    argv = RECIPES["java"].argv(RECIPES["java"].compile, "public class Main {}", "python3")
    args = sb.executor.javac_archive.ensure(javac_key(argv)).result(timeout=1800)
    (archive,) = [a.split("=", 1)[1] for a in args if a.startswith("-J-XX:SharedArchiveFile=")]
    assert stat.S_IMODE(os.stat(archive).st_mode) == 0o644
    (tmp_path / "Main.java").write_text("public class Main { public static void main(String[] a) {"
                                        " System.out.println(java.util.List.of(1, 2)); } }\n")
    for out, extra in (("plain", []), ("archived", [*args, "-J-Xlog:class+load=info"])):
        (tmp_path / out).mkdir()
        r = subprocess.run(["javac", *extra, "-d", out, "Main.java"], cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert "source: shared objects file (top)" in r.stdout  # javac's classes came from the archive
    assert (tmp_path / "plain" / "Main.class").read_bytes() == (tmp_path / "archived" / "Main.class").read_bytes()


def test_artifact_builds_run_only_on_idle_cpu():
    """A build's process (and so the compiler it runs) is ``SCHED_IDLE``: a fresh server's first
    requests never share a core with it."""
    import subprocess
    import sys

    from judgebox.sandbox.speedups.builds import background

    out = subprocess.run([sys.executable, "-c", "import os; print(os.sched_getscheduler(0) == os.SCHED_IDLE)"],
                         preexec_fn=background, capture_output=True, text=True, check=True)
    assert out.stdout == "True\n"


def _children(pid: int) -> dict[int, str]:
    """``{pid: command line}`` of the live children of ``pid``."""
    from tests.sandbox.procs import _proc_table

    return {p: cmd for p, ppid, state, cmd in _proc_table() if ppid == pid and state != "Z"}


@pytest.mark.skipif(not shutil.which("go"), reason="go not installed")
def test_sigterm_ends_the_servers_background_builds(live_server_factory, tmp_path):
    """Issue 37, finding 13: SIGTERM to ``judgebox serve`` left its background ``go build std`` (a
    cold Go cache: tens of seconds of CPU) running as an orphan of init. The server ends every
    background build when it shuts down."""
    import signal
    import time

    server = live_server_factory(env={"JUDGEBOX_WORKDIR_ROOT": str(tmp_path)})  # a cold Go cache of its own
    deadline, builds = time.monotonic() + 60, {}
    while time.monotonic() < deadline and not builds:
        builds = {p: cmd for p, cmd in _children(server.process.pid).items() if cmd.endswith("go build std")}
        time.sleep(0.1)
    assert builds, f"no go build std under the server: {_children(server.process.pid)}"
    try:
        os.kill(server.process.pid, signal.SIGTERM)
        server.process.wait(60)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in builds):
            time.sleep(0.1)
        left = [p for p in builds if os.path.exists(f"/proc/{p}")]
        assert not left, f"go build std outlived the server: {left}"
    finally:
        for pid in builds:  # only the build this test's server started
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
