"""Differential test: a python run forked from the fork-server (zygote) must look exactly like a
spawned ``python main.py`` run.

Each program of the corpus runs through ``LocalSandbox()`` (fork-server, the default) and
``LocalSandbox(zygote=False)`` (spawn). Stdout, stderr (with pids, hex addresses and the per-run
folder replaced by placeholders), the return code, the run's status and the response status must be
identical. A case where the two modes really differ is kept and marked ``xfail(strict=True)`` with
both outputs in the reason, so it fails loudly once fixed.
"""

import re
import textwrap

import pytest

from judgebox.sandbox import LocalSandbox

_RUN_DIR = re.compile(r"/tmp/judgebox-runs/run-[^/\s'\"]+")
_HEX = re.compile(r"0x[0-9a-fA-F]{6,}")
_PID = re.compile(r"\b(pid|ppid)=\d+")


def normalise(text: str) -> str:
    text = _RUN_DIR.sub("<RUN>", text)
    text = _HEX.sub("0x<ADDR>", text)
    return _PID.sub(r"\1=<PID>", text)


@pytest.fixture(scope="module")
def fork_sb():
    return LocalSandbox()


@pytest.fixture(scope="module")
def spawn_sb():
    return LocalSandbox(zygote=False)


def run(sb, code, stdin=None, timeout=10, memory=None, preload=()):
    req = {"code": textwrap.dedent(code), "language": "python", "run_timeout": timeout,
           "forkserver_preload": list(preload)}
    if stdin is not None:
        req["stdin"] = stdin
    if memory is not None:
        req["memory_limit_MB"] = memory
    r = sb.run_code(req)
    rr = r.run_result
    return {
        "status": str(r.status),
        "run_status": str(rr.status) if rr is not None else None,
        "return_code": rr.return_code if rr is not None else None,
        "stdout": normalise(rr.stdout or "") if rr is not None else None,
        "stderr": normalise(rr.stderr or "") if rr is not None else None,
    }


def _short(s, n=600):
    if not isinstance(s, str) or len(s) <= n:
        return repr(s)
    return repr(s[:n]) + f"... ({len(s)} chars)"


def describe_diff(a, b):
    lines = []
    for k in a:
        if a[k] != b[k]:
            lines.append(f"{k}: fork-server={_short(a[k])} spawn={_short(b[k])}")
    return "\n".join(lines)


# (name, code, stdin, run_timeout, memory_limit_MB)
CASES = [
    ("stdout_flood_2MB", "import sys\nsys.stdout.write('x' * (2 << 20))\nprint('end')\n", None, 10, None),
    ("stderr_flood", "import sys\nfor i in range(20000):\n    print('err line', i, file=sys.stderr)\n", None, 10, None),
    ("input_at_eof", "print('before')\ns = input()\nprint('got', s)\n", "", 10, None),
    ("stdin_lines", """
        import sys
        lines = sys.stdin.read().splitlines()
        print(len(lines), sum(int(x) for x in lines))
        """, "1\n2\n3\n40\n", 10, None),
    ("sys_exit_3", "print('out')\nimport sys\nsys.exit(3)\n", None, 10, None),
    ("sys_exit_msg", "import sys\nsys.exit('msg')\n", None, 10, None),
    ("os_exit_7", "import os\nprint('buffered, lost')\nos._exit(7)\n", None, 10, None),
    ("uncaught_exception", "print('hi')\nraise ValueError('boom')\n", None, 10, None),
    ("nested_exception", """
        def inner(x):
            return 1 / x
        def outer():
            return inner(0)
        outer()
        """, None, 10, None),
    ("syntax_error", "print('never')\ndef f(:\n    pass\n", None, 10, None),
    ("dunder_main", """
        def main():
            print('main ran', __name__)
        if __name__ == "__main__":
            main()
        else:
            print('not main', __name__)
        """, None, 10, None),
    ("non_daemon_thread", """
        import threading, time
        def work():
            time.sleep(0.3)
            print('thread after main', flush=True)
        threading.Thread(target=work).start()
        print('main done', flush=True)
        """, None, 10, None),
    ("daemon_thread", """
        import threading, time
        def work():
            print('daemon start', flush=True)
            time.sleep(5)
            print('daemon never', flush=True)
        t = threading.Thread(target=work, daemon=True)
        t.start()
        time.sleep(0.2)
        print('main done')
        """, None, 10, None),
    ("deep_recursion_big_stack_thread", """
        import sys, threading
        sys.setrecursionlimit(10**6)
        threading.stack_size(512 << 20)
        def f(n):
            return 0 if n == 0 else 1 + f(n - 1)
        out = []
        t = threading.Thread(target=lambda: out.append(f(200000)))
        t.start(); t.join()
        print(out)
        """, None, 20, 1024),
    ("recursion_error_depth", """
        import sys
        depth = 0
        def f():
            global depth
            depth += 1
            f()
        try:
            f()
        except RecursionError as e:
            print('depth', depth, sys.getrecursionlimit(), e)
        """, None, 10, None),
    ("multiprocessing_fork", """
        import multiprocessing as mp
        def sq(x):
            return x * x
        if __name__ == '__main__':
            with mp.get_context('fork').Pool(2) as p:
                print(p.map(sq, range(10)))
        """, None, 30, None),
    ("multiprocessing_spawn", """
        import multiprocessing as mp
        def sq(x):
            return x * x
        if __name__ == '__main__':
            with mp.get_context('spawn').Pool(2) as p:
                print(p.map(sq, range(10)))
        """, None, 30, None),
    ("multiprocessing_forkserver", """
        import multiprocessing as mp
        def sq(x):
            return x * x
        if __name__ == '__main__':
            with mp.get_context('forkserver').Pool(2) as p:
                print(p.map(sq, range(10)))
        """, None, 30, None),
    ("atexit_handlers", """
        import atexit, sys
        atexit.register(lambda: print('first registered, runs last'))
        atexit.register(lambda: print('second registered, runs first'))
        print('body')
        sys.exit(2)
        """, None, 10, None),
    ("sigterm_handler", """
        import os, signal, sys
        def h(signum, frame):
            print('got signal', signum, flush=True)
            sys.exit(5)
        signal.signal(signal.SIGTERM, h)
        os.kill(os.getpid(), signal.SIGTERM)
        print('not reached')
        """, None, 10, None),
    ("sigterm_default", """
        import os, signal
        print('dying', flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
        """, None, 10, None),
    ("sigpipe_broken_pipe", """
        import os, signal
        print([str(signal.getsignal(s)) for s in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM,
                                                  signal.SIGCHLD, signal.SIGXFSZ, signal.SIGHUP)])
        r, w = os.pipe()
        os.close(r)
        try:
            os.write(w, b'x')
        except BrokenPipeError as e:
            print('BrokenPipeError', e.errno)
        """, None, 10, None),
    ("sigpipe_subprocess", """
        import subprocess, sys
        p = subprocess.run(['sh', '-c', 'yes | head -n 1; echo "${PIPESTATUS:-none}"'],
                           capture_output=True, text=True)
        print(p.returncode, p.stdout)
        p = subprocess.run([sys.executable, '-c', 'import signal; print(signal.getsignal(signal.SIGPIPE))'],
                           capture_output=True, text=True)
        print(p.returncode, p.stdout, p.stderr)
        """, None, 10, None),
    ("sys_argv_file_path0", """
        import sys, os
        print(sys.argv)
        print(__file__)
        print(sys.path[0])
        print(sys.path)
        print(sys.executable, sys.prefix, sys.base_prefix)
        print(sys.orig_argv if hasattr(sys, 'orig_argv') else None)
        """, None, 10, None),
    ("globals_sorted", """
        print(sorted(globals()))
        print(__name__, __package__, __spec__, __doc__, __cached__ if '__cached__' in globals() else 'nocached')
        print(type(__builtins__).__name__, __loader__.__class__.__name__)
        """, None, 10, None),
    ("sys_modules_sorted", "import sys\nprint(sorted(sys.modules))\n", None, 10, None),
    ("sys_flags", "import sys\nprint(sys.flags)\nprint(sys.warnoptions, sys._xoptions)\n", None, 10, None),
    ("environ_sorted", "import os\nfor k, v in sorted(os.environ.items()):\n    print(k, '=', v)\n", None, 10, None),
    ("getcwd", "import os\nprint(os.getcwd())\nprint(sorted(os.listdir('.')))\n", None, 10, None),
    ("relative_file_write_read", """
        with open('out.txt', 'w') as f:
            f.write('hello file\\n')
        with open('out.txt') as f:
            print(f.read(), end='')
        import os
        print(os.path.abspath('out.txt'))
        """, None, 10, None),
    ("help_len", "help(len)\n", None, 10, None),
    ("large_ints", """
        import sys
        print(sys.get_int_max_str_digits() if hasattr(sys, 'get_int_max_str_digits') else None)
        try:
            print(len(str(10**5000)))
        except ValueError as e:
            print('ValueError', e)
        print(len(str(10**4000)))
        """, None, 10, None),
    ("unicode_output", """
        import sys, locale
        print('héllo ✓ 日本語 😀 ∑')
        print(sys.stdout.encoding, sys.stderr.encoding, sys.stdin.encoding, sys.getfilesystemencoding())
        print(sys.stdout.errors, sys.stderr.errors, locale.getpreferredencoding(False))
        print('ünïcödé', file=sys.stderr)
        """, None, 10, None),
    ("numpy_1GB_under_256MB", """
        import numpy as np
        a = np.ones(1 << 27)  # 1 GiB of float64
        print('allocated', a.sum())
        """, None, 20, 256),
    ("timeout_busy_loop", "while True:\n    pass\n", None, 1, None),
    ("memory_bomb", """
        a = []
        while True:
            a.append(bytearray(10 << 20))
        """, None, 10, 256),
    ("print_without_newline", "print('no newline at exit', end='')\n", None, 10, None),
    ("stdout_write_os_write_interleave", """
        import sys, os
        sys.stdout.write('a\\n')
        os.write(1, b'b\\n')
        sys.stdout.write('c\\n')
        sys.stdout.flush()
        os.write(1, b'd\\n')
        print(sys.stdout.line_buffering, sys.stdout.isatty())
        """, None, 10, None),
    ("warnings_module_level", "import warnings\nwarnings.warn('x')\nprint('after')\n", None, 10, None),
    ("import_this", "import this\n", None, 10, None),
    ("logging_warning", "import logging\nlogging.warning('careful %d', 42)\nlogging.info('hidden')\n", None, 10, None),
    ("recursion_limit", "import sys\nprint(sys.getrecursionlimit())\n", None, 10, None),
    ("uncaught_keyboard_interrupt", "print('before')\nraise KeyboardInterrupt\n", None, 10, None),
    ("sigint_to_self", "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nprint('not reached')\n", None, 10, None),
    ("del_at_interpreter_exit",
     "class A:\n    def __del__(self):\n        print('del at exit')\na = A()\nprint('end of script')\n", None, 10, None),
    # what the interpreter's exit does (the fork-server's child ends by _exit only when none of it can show)
    ("buffered_file_on_stdout_unclosed",
     "f = open(1, 'w', closefd=False)\nf.write('flushed by the exit\\n')\nprint('direct')\n", None, 10, None),
    ("stdout_replaced_by_buffered_wrapper",
     "import sys, io\nsys.stdout = io.TextIOWrapper(open(1, 'wb', closefd=False))\nprint('via wrapper')\n",
     None, 10, None),
    ("generator_finally_at_exit",
     "def g():\n    try:\n        yield 1\n    finally:\n        print('finally at exit')\nx = g()\nnext(x)\n",
     None, 10, None),
    ("weakref_callback_at_exit",
     "import weakref\nclass A:\n    pass\na = A()\nr = weakref.ref(a, lambda _: print('callback at exit'))\n",
     None, 10, None),
    ("weakref_finalize_at_exit",
     "import weakref\nclass A:\n    pass\na = A()\nweakref.finalize(a, print, 'finalized at exit')\n",
     None, 10, None),
    ("del_of_object_kept_in_builtins",
     "import builtins\nclass A:\n    def __del__(self):\n        print('del from builtins')\nbuiltins.kept = A()\n",
     None, 10, None),
    ("del_of_cyclic_garbage",
     "class A:\n    def __del__(self):\n        print('cycle collected')\na = A()\na.me = a\ndel a\nprint('end')\n",
     None, 10, None),
    ("atexit_starts_no_thread_but_prints",
     "import atexit, sys\natexit.register(lambda: sys.stderr.write('atexit to stderr\\n'))\nprint('x')\n",
     None, 10, None),
    ("abc_weakrefs_and_numpy_quick_exit",
     "import collections.abc, numpy\nprint(isinstance([], collections.abc.Sequence), numpy.arange(4).sum())\n",
     None, 10, None),
    ("gc_callback_at_exit",
     "import gc\ngc.callbacks.append(lambda phase, info: print('gc', phase) if phase == 'stop' else None)\n"
     "print('end')\n", None, 10, None),
    ("profile_function_at_exit",
     "import sys, threading\nsys.setprofile(lambda frame, event, arg: print(event, frame.f_code.co_name)"
     " if event == 'call' else None)\nprint('end')\n", None, 10, None),
    ("proc_self_files_readable",  # a forked child that changed uid is not dumpable unless made so
     "import os\nprint(len(open('/proc/self/environ', 'rb').read()) > 0, sorted(os.listdir('/proc/self/fd')))\n"
     "print(os.stat('/proc/self/environ').st_uid == os.getuid())\n", None, 10, None),
    ("inspect_stack_len", "import inspect\nprint(len(inspect.stack()))\n", None, 10, None),
    ("faulthandler_state", "import faulthandler\nprint(faulthandler.is_enabled())\n", None, 10, None),
    ("stdin_isatty", "import sys\nprint(sys.stdin.isatty(), sys.stdout.isatty(), sys.stderr.isatty())\n", None, 10, None),
    ("pid_ppid", "import os\nprint(f'pid={os.getpid()} ppid={os.getppid()}', os.getppid() == 0, os.getpid() == 1)\n",
     None, 10, None),
]

# The one difference left, documented in the README (fork-server): main.py's <module> frame runs
# under the fork-server's "<string>" frame (the line of sandbox/zygote.py's BOOT that drives the
# run), which a spawned `python main.py` does not have. Its recursion depth is given back
# (recursion_error_depth: 999 in both; it was 997 before judgebox.sandbox.speedups.zygote._hide_boot_depth).
KNOWN_DIFFERENCES = {
    "profile_function_at_exit": (
        "documented difference: a profile or trace function still set when the script ends also sees the "
        "fork-server's own exit code (calls of sandbox/zygote.py's _exit_code and what it calls) before the "
        "interpreter's exit, which it then sees as under spawn (call _shutdown ...)"),
    "weakref_callback_at_exit": (
        "documented difference (found with the exit cases, there before the quick exit): a weakref callback "
        "that fires while the exit clears __main__ prints under the fork-server (its __main__ is cleared at "
        "another point of Py_FinalizeEx) and not under spawn; fork-server stdout 'callback at exit\n', "
        "spawn stdout ''"),
    "inspect_stack_len": (
        "documented difference: inspect.stack() at module level shows the fork-server's bootstrap frame "
        "('<string>', <module>) below main.py; fork-server stdout '2\n', spawn stdout '1\n'"),
}


def _params(more=None):
    known = {**KNOWN_DIFFERENCES, **(more or {})}
    out = []
    for name, code, stdin, timeout, memory in CASES:
        marks = []
        if name in known:
            marks.append(pytest.mark.xfail(strict=True, reason=known[name]))
        out.append(pytest.param(code, stdin, timeout, memory, id=name, marks=marks))
    return out


def test_corpus_is_large_enough():
    assert len(CASES) >= 40
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.slow
@pytest.mark.parametrize("code,stdin,timeout,memory", _params())
def test_fork_matches_spawn(fork_sb, spawn_sb, code, stdin, timeout, memory):
    forked = run(fork_sb, code, stdin, timeout, memory)
    spawned = run(spawn_sb, code, stdin, timeout, memory)
    assert forked == spawned, describe_diff(forked, spawned)


#: What the reward harness's runner preloads (``judgebox.reward.harness.python.RUNNER_PRELOAD``, plus
#: ``unittest`` for unittest tasks): the corpus forked with these imported must still look spawned.
HARNESS_PRELOAD = ("ast", "collections", "ctypes", "json", "sysconfig", "time", "traceback", "types", "unittest")


#: By design, not a defect: the preloaded modules are in the run's ``sys.modules`` from the start.
PRELOAD_DIFFERENCES = {"sys_modules_sorted": "by design: the preloaded modules are in sys.modules at start"}


@pytest.mark.slow
@pytest.mark.parametrize("code,stdin,timeout,memory", _params(PRELOAD_DIFFERENCES))
def test_preloaded_fork_matches_spawn(fork_sb, spawn_sb, code, stdin, timeout, memory):
    forked = run(fork_sb, code, stdin, timeout, memory, HARNESS_PRELOAD)
    spawned = run(spawn_sb, code, stdin, timeout, memory, HARNESS_PRELOAD)
    assert forked == spawned, describe_diff(forked, spawned)


def test_forkserver_was_used(fork_sb):
    before = fork_sb.executor.forkserver.stats()["forked"]
    r = run(fork_sb, "print('forked')\n")
    assert r["stdout"] == "forked\n"
    after = fork_sb.executor.forkserver.stats()
    assert after["forked"] > before, after


def test_random_differs_between_forkserver_runs(fork_sb):
    # Every forked child must reseed: two runs of the same fork-server must not share random state.
    code = "import random\nprint(random.random())\n"
    a, b = run(fork_sb, code), run(fork_sb, code)
    assert a["status"] == b["status"] == "RunStatus.Success"
    assert a["stdout"] != b["stdout"]


def test_hash_seed_between_forkserver_runs(fork_sb, spawn_sb):
    # str hashes use a seed fixed at interpreter start-up. Forked children inherit the fork-server
    # interpreter's seed, so two fork-server runs agree on hash("abc"); two spawned runs each draw
    # their own seed and (almost surely) disagree. We assert only that and do not compare the modes.
    code = "print(hash('abc'))\n"
    f1, f2 = run(fork_sb, code), run(fork_sb, code)
    s1, s2 = run(spawn_sb, code), run(spawn_sb, code)
    print("fork-server:", f1["stdout"], f2["stdout"], "spawn:", s1["stdout"], s2["stdout"])
    assert f1["stdout"] == f2["stdout"]
    assert s1["stdout"] != s2["stdout"]
