"""Each case of a ``/run_tests`` request starts from the same files (:mod:`judgebox.sandbox.case_reset`):
nothing an earlier case wrote in the working folder, ``/tmp`` or ``/var/tmp`` is seen by the next,
and what it changed or removed is back. Before, case 1 printed ``seen A``, and a slow program that
saved its progress passed later cases (``pass_rate`` 0.6 instead of 0)."""

from __future__ import annotations

import base64

import pytest

from judgebox.integrations.verl import compute_score
from judgebox.reward import StdioCase, TestSpec

STATEFUL = ("import os\nfor p in ('state.txt', '/tmp/state.txt', '/var/tmp/state.txt'):\n"
            "    print('seen' if os.path.exists(p) else 'fresh', p)\n"
            "for p in ('state.txt', '/tmp/state.txt', '/var/tmp/state.txt'):\n    open(p, 'a').write(input())\n"
            "os.makedirs('d/e', exist_ok=True)\nprint(open('data.txt').read())\n"
            "open('data.txt', 'w').write('changed'); os.chmod('data.txt', 0o600); os.remove('keep.txt')")
FRESH = "fresh state.txt\nfresh /tmp/state.txt\nfresh /var/tmp/state.txt\norig\n"


def test_every_case_sees_the_request_files_and_nothing_from_earlier_cases(local_sandbox):
    b64 = lambda s: base64.b64encode(s.encode()).decode()  # noqa: E731
    r = local_sandbox.run_tests({"code": STATEFUL, "language": "python", "files": {"data.txt": b64("orig"),
                                                                                    "keep.txt": b64("")},
                                 "cases": [{"stdin": "A\nA\nA"}, {"stdin": "B\nB\nB"}, {"stdin": "C\nC\nC"}]})
    assert [(x.status.value, x.stdout) for x in r.run_results] == [("Finished", FRESH)] * 3


def test_a_compiled_program_is_restored_for_every_case(local_sandbox):
    code = ('#include <cstdio>\nint main() { FILE *f = fopen("main", "w");\n'  # try to clobber itself
            '  std::puts(f ? "clobbered" : "busy"); if (f) std::fclose(f);\n'
            '  FILE *g = fopen("note.txt", "r"); std::puts(g ? "seen" : "fresh"); if (g) std::fclose(g);\n'
            '  g = fopen("note.txt", "w"); std::fputs("x", g); std::fclose(g); }\n')
    r = local_sandbox.run_tests({"code": code, "language": "cpp", "cases": [{}, {}, {}]})
    assert r.compile_result.return_code == 0, r.compile_result.stderr
    assert [x.stdout.split("\n")[1] for x in r.run_results] == ["fresh"] * 3
    assert all(x.status.value == "Finished" and x.return_code == 0 for x in r.run_results)


@pytest.mark.slow
def test_saved_progress_earns_no_partial_credit():
    """Needs 1.5 s of CPU at run_timeout=1; with its progress kept between cases it finished later ones."""
    slow = ("import os, time\nt = time.process_time()\ndone = float(open('p.txt').read()) if os.path.exists('p.txt') else 0\n"
            "while done < 1.5:\n    time.sleep(0)\n    done += time.process_time() - t; t = time.process_time()\n"
            "    open('p.txt', 'w').write(str(done))\nprint(input())\n")
    spec = TestSpec(kind="stdio", run_timeout=1, stdio=[StdioCase(stdin=f"{i}\n", expected=f"{i}\n") for i in range(5)])
    score = compute_score("x", f"```python\n{slow}```", spec.model_dump_json(), score_mode="pass_rate")
    assert (score["score"], score["verdict"]) == (0.0, "time_limit_exceeded")


# ---------------------------------------------------------------- a case's metadata tricks (audit finding 6)
def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def three_cases(local_sandbox, code: str, files: dict[str, str]) -> list[str]:
    r = local_sandbox.run_tests({"code": code, "language": "python", "files": {k: b64(v) for k, v in files.items()},
                                 "cases": [{}, {}, {}]})
    assert r.status == "Success", (r.message, [x.stderr for x in r.run_results])
    return [x.stdout for x in r.run_results]


HIDDEN_WRITES = {
    # rewrite the file, then put its size, atime and mtime back: the reset compared metadata only
    "utime": ("import os\nst = os.stat('n.txt')\nn = int(open('n.txt').read()) + 1\nprint(n)\n"
              "open('n.txt', 'w').write(str(n))\nos.utime('n.txt', ns=(st.st_atime_ns, st.st_mtime_ns))\n"),
    # an mmap write on tmpfs updates neither mtime nor ctime
    "mmap": ("import mmap\nwith open('n.txt', 'r+b') as f:\n    m = mmap.mmap(f.fileno(), 0)\n"
             "    n = int(bytes(m[:1])) + 1\n    print(n)\n    m[:1] = str(n).encode()\n    m.flush()\n"),
}


@pytest.mark.parametrize("code", HIDDEN_WRITES.values(), ids=HIDDEN_WRITES)
def test_a_rewrite_that_hides_its_metadata_is_undone_by_content(local_sandbox, code):
    """Finding 6: a case that rewrote ``n.txt`` and put its mtime back (or wrote through ``mmap``)
    passed a counter on: cases printed 1, 2, 3. The reset compares content, so each prints 1."""
    assert three_cases(local_sandbox, code, {"n.txt": "0"}) == ["1\n"] * 3


def test_extended_attributes_of_files_and_folders_do_not_reach_the_next_case(local_sandbox):
    """Finding 6: a ``user.*`` xattr set on a file, a folder and the working folder itself counted
    1, 2, 3 across cases. Attributes not in the snapshot are removed: each case counts 1."""
    code = ("import errno, os\nfor p in ('.', 'n.txt', 'd'):\n"
            "    try:\n        n = int(os.getxattr(p, 'user.n')) + 1\n    except OSError:\n        n = 1\n"
            "    try:\n        os.setxattr(p, 'user.n', str(n).encode())\n"
            "    except OSError as e:\n        print('refused', errno.errorcode[e.errno])\n        break\n"
            "    print(p, n)\n")
    out = three_cases(local_sandbox, code, {"n.txt": "0", "d/k.txt": ""})
    if out[0].startswith("refused"):
        pytest.skip(f"the run's filesystem refuses user xattrs ({out[0].split()[1]})")
    assert out == [". 1\nn.txt 1\nd 1\n"] * 3


def test_folder_modes_and_times_are_restored(local_sandbox):
    """Finding 6: a case's ``chmod`` of a subfolder and of the working folder, and a folder's
    mtime set with ``os.utime``, were seen by later cases (0o500 / 0o755, mtime + 1 ns each case).
    Every case sees the folders as compiled: ``d`` 0o755, the working folder 0o700."""
    code = ("import os, stat\nst = os.stat('d')\n"
            "print(oct(stat.S_IMODE(st.st_mode)), oct(stat.S_IMODE(os.stat('.').st_mode)), st.st_mtime_ns % 1000)\n"
            "os.utime('d', ns=(0, st.st_mtime_ns + 1))\nos.chmod('d', 0o500)\nos.chmod('.', 0o755)\n")
    out = three_cases(local_sandbox, code, {"d/k.txt": ""})
    assert out[0].split()[:2] == ["0o755", "0o700"]
    assert out == [out[0]] * 3


def test_a_deep_folder_chain_is_removed_between_cases(local_sandbox):
    """Thousands of nested folders (a path far beyond PATH_MAX from the host's side) are removed
    before the next case: the reset walks one open folder at a time, never by path."""
    code = ("import os\nprint(os.path.exists('z'))\nfor _ in range(2000):\n    os.mkdir('z'); os.chdir('z')\n"
            "open('state', 'w').write('x')\n")
    assert three_cases(local_sandbox, code, {}) == ["False\n"] * 3


def test_a_case_that_fills_the_disk_does_not_stop_the_restore(local_sandbox):
    """A case that empties a request file and fills the run's disk in a request folder: the space
    is freed before any file is written back (writing ``a.txt`` first ran out of space and the
    request raised), so every case sees ``a.txt`` whole."""
    code = ("import os\nprint(os.path.getsize('a.txt'))\nos.truncate('a.txt', 0)\n"
            "with open('z/big', 'wb') as f:\n    try:\n        while True:\n            f.write(b'x' * (1 << 20))\n"
            "            f.flush()\n    except OSError:\n        print('full')\n")
    r = local_sandbox.run_tests({"code": code, "language": "python", "disk_limit_MB": 16,
                                 "files": {"a.txt": base64.b64encode(b"a" * (4 << 20)).decode(), "z/k": ""},
                                 "cases": [{}, {}, {}]})
    assert [x.stdout for x in r.run_results] == [f"{4 << 20}\nfull\n"] * 3


# ---------------------------------------------------------------- a wrong answer is never "no reward" (finding 5)
LOCKOUT = ('#include <cstdio>\n#include <sys/stat.h>\n'
           'int main() { long x; if (std::scanf("%ld", &x) != 1) return 1;\n'
           '  std::printf("%ld\\n", x + 1); chmod(".", 0); }\n')  # right for 1 (2 * 1), wrong after


def test_a_case_that_locks_the_working_folder_does_not_stop_the_next_case(local_sandbox):
    """Finding 5: after ``chmod(".", 0)`` in case 1, starting ``./main`` for case 2 failed with
    EACCES: cases 2 and 3 were ``Error`` and the request ``SandboxError``. The reset gives the
    working folder back mode 0700 and the run uid, so every case runs."""
    r = local_sandbox.run_tests({"code": LOCKOUT, "language": "cpp",
                                 "cases": [{"stdin": "1"}, {"stdin": "2"}, {"stdin": "3"}]})
    assert r.compile_result.return_code == 0, r.compile_result.stderr
    assert (r.status, r.message) == ("Success", "")
    assert [(x.status, x.return_code, x.stdout) for x in r.run_results] == [
        ("Finished", 0, "2\n"), ("Finished", 0, "3\n"), ("Finished", 0, "4\n")]


def test_a_wrong_answer_that_locks_the_working_folder_is_a_wrong_answer():
    """Finding 5 through the reward layer: the same program was ``infra_error`` (reward masked,
    ``pass_rate`` None); it is ``wrong_answer`` with the one right case counted."""
    spec = TestSpec(kind="stdio", language="cpp",
                    stdio=[StdioCase(stdin=f"{i}\n", expected=f"{2 * i}\n") for i in (1, 2, 3)])
    score = compute_score("x", f"```cpp\n{LOCKOUT}```", spec.model_dump_json(), score_mode="pass_rate")
    assert (score["verdict"], score["infra_error"], score["n_passed"], score["n_total"]) == ("wrong_answer", False, 1, 3)


def test_a_program_file_that_cannot_be_executed_is_the_runs_failure(local_sandbox):
    """Finding 5 (b): a program file in the working folder that cannot be executed (here a case's
    files replace ``./main`` with text) is exit status 126 with the reason on stderr, as a shell
    reports: the request is ``Failed``, never ``SandboxError``; the next case runs ``./main`` again."""
    r = local_sandbox.run_tests({"code": LOCKOUT, "language": "cpp",
                                 "cases": [{"stdin": "1"}, {"stdin": "1", "files": {"main": b64("not a program")}},
                                           {"stdin": "1"}]})
    assert (r.status, r.message) == ("Failed", "")
    bad = r.run_results[1]
    assert (bad.status, bad.return_code, bad.stdout) == ("Finished", 126, "")
    # the case's file is a new one (mode 0644, as every file a request writes): permission denied
    assert bad.stderr.startswith("./main: Permission denied (the program file in the working folder could not be executed")
    assert [(x.status, x.return_code, x.stdout) for x in r.run_results[::2]] == [("Finished", 0, "2\n")] * 2


def test_the_scratch_folders_own_times_do_not_carry_a_message_between_cases(local_sandbox):
    """Case 0 touched /var/tmp and /dev/shm at a moment it chose; later cases read the exact mtime (a
    covert channel). The scratch folders get back their own metadata with their emptying."""
    # (/tmp itself is left out: each run's view makes the workdir root's mount point in it at start)
    code = ("import os, sys\nstamps = [os.stat(p).st_mtime_ns for p in ('/var/tmp', '/dev/shm')]\n"
            "print(stamps)\nif input() == 'send':\n    for p in ('/var/tmp', '/dev/shm'): os.utime(p)\n")
    r = local_sandbox.run_tests({"code": code, "language": "python",
                                 "cases": [{"stdin": "send"}, {"stdin": "read"}, {"stdin": "read"}]})
    seen = [x.stdout for x in r.run_results]
    assert seen[0] == seen[1] == seen[2], seen


# ---------------------------------------------------------------- allocated blocks (issue 37, finding 12)
ALLOCATION = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
me, zeros = os.path.abspath(__file__), 'zeros.bin'
size = os.stat(me).st_size
fd = os.open(zeros, os.O_RDONLY)
print(os.stat(me).st_blocks, os.stat(zeros).st_blocks, os.lseek(fd, 0, os.SEEK_HOLE))
os.close(fd)
KEEP_SIZE, PUNCH_HOLE = 1, 2
for path, mode, at, length in ((me, KEEP_SIZE, size, 37 * 4096),  # blocks past the end
                               (zeros, KEEP_SIZE | PUNCH_HOLE, 4096, 4096)):  # a hole in zeros
    fd = os.open(path, os.O_RDWR)
    assert libc.fallocate(fd, mode, at, length) == 0, os.strerror(ctypes.get_errno())
    os.close(fd)
'''


def test_allocated_blocks_do_not_carry_a_value_between_cases(local_sandbox):
    """Issue 37, finding 12: ``fallocate(FALLOC_FL_KEEP_SIZE)`` past the end of the program's own
    file (or a hole punched in a file of zeros) changes neither its size nor its content, so the
    byte-by-byte reset kept it, and case 2 read the value case 1 put in ``st_blocks`` (8 -> 304) or
    in the ``SEEK_HOLE`` map. Every file is written anew: each case sees the snapshot's blocks."""
    r = local_sandbox.run_tests({"code": ALLOCATION, "language": "python",
                                 "files": {"zeros.bin": base64.b64encode(bytes(4 * 4096)).decode()},
                                 "cases": [{}, {}, {}]})
    assert r.status == "Success", [x.stderr for x in r.run_results]
    seen = [x.stdout for x in r.run_results]
    blocks, zero_blocks, hole = map(int, seen[0].split())
    assert (zero_blocks, hole) == (32, 4 * 4096)  # dense as written: 4 pages, the first hole at the end
    assert seen == [seen[0]] * 3
