"""The Python fork-server's own program: a warm interpreter that forks one child per run.

Runs inside the configured interpreter (not the server's), started by :class:`judgebox.sandbox.speedups.forkserver.ForkServer`
with :data:`BOOT` as ``python -c``; it imports only the standard library plus
:mod:`judgebox.sandbox.isolation.linux` and :mod:`judgebox.sandbox.isolation.childsetup`, loaded by path under a private package name.

Protocol (``SOCK_SEQPACKET``, one request in flight: the server serialises them): the server sends a
``marshal``-ed dict (``argv``, ``cwd``, ``env``, ``rlimits``, ``setup``, ``user``, ``group``, ``ns``, ``inherit``: the
server's own rlimits)
with descriptors ``stdin``, ``stdout``, ``stderr``, an error pipe and, when ``ns``, the PID
namespace the child must be born in; the fork-server answers ``{"pid": n, "error": None}``.

The child is created by ``clone(CLONE_PARENT)``, so it is the **server's** child, exactly as a
spawned command is: its exit status, ``wait4`` rusage and pidfd are the server's, and a fork-server
that dies does not touch the runs in flight. In the child, as in ``subprocess``'s child: the
descriptors go to 0/1/2, the working folder, default ``SIGPIPE``/``SIGXFSZ``, a new session, the
server's rlimits of the moment, then
the whole :func:`judgebox.sandbox.isolation.childsetup.compose` set-up (cgroup, namespaces, view, rlimits, uid,
seccomp) and every other descriptor closed; the error pipe gets the message of a failed set-up, or
EOF once the set-up is done. Then the interpreter is put back to what ``python main.py`` would
start with (:func:`_as_fresh`) and the script runs through ``PyRun_SimpleFileExFlags`` and
``Py_Exit``: CPython's own code for ``python <script>`` (``Modules/main.c``), so ``__main__``,
``__file__``, tracebacks, ``SystemExit`` and the exit code come from the interpreter itself.
"""

import _weakref
import ctypes
import gc
import marshal
import os
import platform
import resource
import signal
import socket
import sys

#: The ``python -c`` program of the fork-server: it takes its working folder off ``sys.path``
#: (a run could write there under minimal isolation), imports the preload modules (``argv[4]``,
#: comma separated, usually none; one that fails is left out) in a namespace of their own, records
#: the interpreter's state (``__main__``'s namespace and ``sys.modules``: what a child keeps) before
#: importing anything else, loads this file under a
#: private name and serves; in a child, :func:`serve` returns the run of the script as a lazy
#: ``map`` that this line drives, so no name of the fork-server is left in the script's globals and
#: the only frame under the script's is this line's.
BOOT = ("__import__('sys').path[0] = '/dev/null'\n"  # not the working folder: no import from there
        "exec('for m in names:\\n try: __import__(m)\\n except Exception: pass',"
        " {'names': __import__('sys').argv[4].split(',')[:64] if __import__('sys').argv[4] else []})\n"
        "__jb = (dict(globals()), set(__import__('sys').modules))\n"
        "import importlib.util as __jbu\n"
        "__jbs = __jbu.spec_from_file_location('_judgebox_zygote', __import__('sys').argv[2] + '/zygote.py')\n"
        "__jbm = __jbu.module_from_spec(__jbs)\n"
        "__jbs.loader.exec_module(__jbm)\n"
        "list(__jbm.serve(*__jb))\n")

CLONE_PARENT = 0x00008000
CLONE_CHILD_SETTID = 0x01000000
CLONE_NEWPID = 0x20000000
_SYS_CLONE = {"x86_64": 56, "aarch64": 220, "ppc64le": 120, "s390x": 120, "riscv64": 220}
#: argument order of the raw clone syscall differs: x86_64 (flags, stack, ptid, ctid, tls); others
#: used here (flags, stack, ptid, tls, ctid)
_CTID_THIRD = platform.machine() == "x86_64"


def _load_childsetup(isolation_dir):
    """:mod:`judgebox.sandbox.isolation.childsetup` (and :mod:`judgebox.sandbox.isolation.linux`) under the private package
    ``_judgebox_child``, without running ``sandbox/__init__.py`` (it needs pydantic, httpx)."""
    import importlib
    import types

    pkg = types.ModuleType("_judgebox_child")
    pkg.__path__ = [isolation_dir]
    sys.modules["_judgebox_child"] = pkg
    return importlib.import_module("_judgebox_child.childsetup")


class _Cloner:
    """``clone(CLONE_PARENT | SIGCHLD)`` wrapped like ``os.fork()`` (CPython's before/after-fork
    hooks), with ``CLONE_CHILD_SETTID`` on glibc's cached thread id when it can be found, as glibc's
    own ``fork`` does (``sysdeps/nptl/_Fork.c``)."""

    def __init__(self):
        self.api = ctypes.pythonapi
        libc = ctypes.PyDLL(None)  # PyDLL: the GIL stays held across the call, as in os.fork()
        self.syscall = libc.syscall
        self.syscall.restype = ctypes.c_long
        self.number = _SYS_CLONE[platform.machine()]
        self.ctid = self._tid_address(libc)

    @staticmethod
    def _tid_address(libc):
        """Address of ``struct pthread.tid`` of this (only) thread: the one int in the first 1 KiB of
        ``pthread_self()`` equal to ``gettid()``; ``None`` unless exactly one matches."""
        libc.pthread_self.restype = ctypes.c_void_p
        base = libc.pthread_self()
        tid = ctypes.c_int.from_address
        me = libc.gettid()
        hits = [base + off for off in range(0, 1024, 4) if tid(base + off).value == me]
        return hits[0] if len(hits) == 1 else None

    def __call__(self):
        flags = CLONE_PARENT | signal.SIGCHLD | (CLONE_CHILD_SETTID if self.ctid else 0)
        ctid = ctypes.c_void_p(self.ctid or 0)
        args = (0, 0, ctid, 0) if _CTID_THIRD else (0, 0, 0, ctid)
        self.api.PyOS_BeforeFork()
        pid = self.syscall(ctypes.c_long(self.number), ctypes.c_ulong(flags), *[
            a if isinstance(a, ctypes.c_void_p) else ctypes.c_void_p(a) for a in args])
        if pid == 0:
            self.api.PyOS_AfterFork_Child()
            return 0
        self.api.PyOS_AfterFork_Parent()
        if pid < 0:
            err = ctypes.get_errno() or 11
            raise OSError(err, f"clone: {os.strerror(err)}")
        return pid


def serve(main_snapshot, modules_snapshot):
    """Answer fork requests on the socket of ``sys.argv[1]`` until the server closes it (then exit).

    Returns only in a child: the run of its script (see :data:`BOOT`)."""
    handlers = {}
    for sig in signal.valid_signals():
        try:
            handlers[sig] = signal.getsignal(sig)
        except (OSError, ValueError):
            pass
    childsetup = _load_childsetup(sys.argv[3])
    linux = childsetup.linux
    sock = socket.socket(fileno=int(sys.argv[1]))
    own_ns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    clone = _Cloner()
    # Every object the fork-server made goes to the permanent generation: a child's collections
    # (and the one at its exit) then skip them instead of walking, and so copying, the whole
    # inherited heap (children: 26 -> 16 ms CPU per print(1) run here).
    gc.freeze()
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 8)
        except OSError:
            os._exit(0)
        if not msg:
            os._exit(0)
        pid, error, entered = -1, None, False
        try:
            req = marshal.loads(msg)
            if req["ns"]:
                linux.setns(fds[4], CLONE_NEWPID)
                entered = True
            pid = clone()
            if pid == 0:
                return _child(req, fds, sock, childsetup, handlers, main_snapshot, modules_snapshot)
        except Exception as exc:  # noqa: BLE001 - reported to the server, which falls back to spawn
            error = f"{type(exc).__name__}: {exc}"
        finally:
            if pid != 0:
                if entered:  # only a request that moved the children's namespace moves it back (setns
                    try:     # needs CAP_SYS_ADMIN: without it, every run with no namespace of its own failed here)
                        linux.setns(own_ns, CLONE_NEWPID)
                    except OSError as exc:  # cannot serve further requests correctly
                        error = f"setns back: {exc}"
                for fd in fds:
                    os.close(fd)
        try:
            sock.send(marshal.dumps({"pid": pid, "error": error}))
        except OSError:
            os._exit(0)
        if error and error.startswith("setns back"):
            os._exit(3)


def _child(req, fds, sock, childsetup, handlers, main_snapshot, modules_snapshot):
    """Set the child up as a spawned command, then return the run of its script."""
    errpipe = fds[3]
    try:
        sock.detach()  # closed below with the rest; the object must not close a reused number later
        for target in (0, 1, 2):
            os.dup2(fds[target], target)
        os.chdir(req["cwd"])
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # subprocess's restore_signals
            signal.signal(sig, signal.SIG_DFL)
        os.setsid()
        for res, soft, hard in req["inherit"]:  # the server's rlimits, as a spawned child inherits them
            try:
                resource.setrlimit(res, (soft, hard))
            except (OSError, ValueError):
                pass
        setup = childsetup.ChildSetup.from_wire(req["setup"]) if req["setup"] is not None else None
        childsetup.compose(req["rlimits"], setup.preexec if setup else None, req["user"], req["group"],
                           setup.seal if setup else None)()
        # A process that changed its uid is not dumpable until it execs: its /proc/self files
        # (environ, ...) would stay root's and unreadable to the run, unlike a spawned run's.
        childsetup.linux.prctl(childsetup.linux.PR_SET_DUMPABLE, 1)
        os.closerange(3, errpipe)
        os.closerange(errpipe + 1, 1 << 30)
        job = _as_fresh(req, handlers, main_snapshot, modules_snapshot)
    except BaseException as exc:  # noqa: BLE001 - the server reports it as the run's spawn error
        try:
            os.write(errpipe, f"{type(exc).__name__}: {exc}".encode(errors="replace")[:4000])
        finally:
            os._exit(255)
    os.close(errpipe)
    return job


#: Recursion levels under the script that ``python <script>`` does not have: :data:`BOOT`'s line and
#: the ``ctypes`` call into ``PyRun_SimpleFileExFlags``.
BOOT_DEPTH = 2


def _hide_boot_depth():
    """Give the script the recursion depth it has under ``python <script>`` (999 frames at the
    default limit of 1000, not 997), on CPython 3.11, whose ``PyThreadState`` starts with
    ``prev, next, interp, _initialized, _static, recursion_remaining, recursion_limit``
    (``Include/cpython/pystate.h``); checked against ``sys.getrecursionlimit()`` first, and left
    alone on other versions (the script then has ``BOOT_DEPTH`` levels fewer)."""
    if sys.version_info[:2] != (3, 11):
        return
    api = ctypes.pythonapi
    api.PyThreadState_Get.restype = ctypes.c_void_p
    fields = (ctypes.c_int * 4).from_address(api.PyThreadState_Get() + 3 * ctypes.sizeof(ctypes.c_void_p))
    remaining, limit = fields[2], fields[3]
    if limit == sys.getrecursionlimit() and 0 < remaining <= limit:
        fields[2] = remaining + BOOT_DEPTH


def _as_fresh(req, handlers, main_snapshot, modules_snapshot):
    """Put the interpreter back to the state ``python <script>`` starts in, and return the run.

    Reset: the environment, signal dispositions, every module the fork-server imported but its
    preload modules (removed from ``sys.modules``; an ``import`` loads a fresh one), ``__main__``'s
    namespace, ``sys.argv``,
    ``sys.orig_argv``, ``sys.path[0]``, ``site``'s user folders (they follow ``HOME``).
    Not reset (see README, fork-server): the string hash seed (one per fork-server, which is rotated).
    """
    argv = req["argv"]
    script = os.path.abspath(argv[1])
    os.environ.clear()
    os.environ.update(req["env"])
    for sig, handler in handlers.items():
        if handler is not None and signal.getsignal(sig) is not handler:
            signal.signal(sig, handler)
    site = sys.modules.get("site")
    if site is not None:
        site.USER_BASE = site.USER_SITE = None
    platform_ = sys.modules.get("platform")  # a preload module imported it: its uname is the fork-server's
    if platform_ is not None:
        platform_._uname_cache = None
    api = ctypes.pythonapi
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
    run = api.PyRun_SimpleFileExFlags
    run.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p)
    run.restype = ctypes.c_int
    stop = api.Py_Exit
    stop.argtypes = (ctypes.c_int,)
    stop.restype = None
    path = os.fsencode(script)
    fp = libc.fopen(path, b"rb")
    if not fp:
        err = ctypes.get_errno()
        os.write(2, f"{argv[0]}: can't open file {script!r}: [Errno {err}] {os.strerror(err)}\n".encode())
        os._exit(2)
    for name in list(sys.modules):
        if name not in modules_snapshot:
            del sys.modules[name]
    sys.path_importer_cache.clear()
    sys.argv = list(argv[1:])
    sys.orig_argv = list(argv)
    sys.path[0] = os.path.dirname(script)
    main = sys.modules["__main__"].__dict__
    main.clear()
    main.update(main_snapshot)
    _hide_boot_depth()
    gc.freeze()  # what this set-up made too: the script's objects are the only ones left to collect
    # the map keeps __main__ alive until finalization, as the interpreter's own reference does
    # under ``python <script>``: finalization then clears its namespace (objects' __del__ run)
    return map(stop, map(_exit_code, map(run, [fp], [path], [1], [None]), [sys.modules["__main__"]]))


def _exit_code(failed, _main):
    """The exit status after the script (``PyRun_SimpleFileExFlags`` returned ``failed``: -1 when it
    ended in an uncaught exception, already printed): 1 or 0, as ``Modules/main.c`` does; an
    uncaught ``KeyboardInterrupt`` ends the process by ``SIGINT`` (``exit_sigint``) after the
    non-daemon threads, ``atexit`` handlers and the stdio flush that ``Py_FinalizeEx`` would do."""
    last = getattr(sys, "last_type", None)
    if failed and isinstance(last, type) and issubclass(last, KeyboardInterrupt):
        threading = sys.modules.get("threading")
        if threading is not None:
            threading._shutdown()
        import atexit
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - as the interpreter's own flush at exit
                pass
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    code = 1 if failed else 0
    if _nothing_left_to_finalize():
        os._exit(code)
    return code


def _bookkeeping_weakref(ref):
    """Whether ``ref`` is a plain weak reference whose callback, if any, is the standard library's
    own bookkeeping (``WeakSet``/``WeakValueDictionary``/``WeakKeyDictionary`` entries, ``abc``'s
    registries: every ``isinstance`` against an ABC makes these), never a program's."""
    if type(ref) is not _weakref.ReferenceType and type(ref).__module__ not in ("_weakrefset", "weakref"):
        return False
    callback = ref.__callback__
    if callback is None:
        return True
    code = getattr(callback, "__code__", None)
    if code is not None:
        return os.path.basename(code.co_filename) in ("_weakrefset.py", "weakref.py") and \
            code.co_filename.startswith(sys.base_prefix) and callback.__qualname__.split(".")[-1] in ("_remove", "remove")
    return type(callback).__name__ == "builtin_function_or_method" and callback.__name__ == "_destroy" and \
        type(getattr(callback, "__self__", None)) is _weakref.ReferenceType


#: A run whose heap holds more tracked objects than this is finalized by the interpreter without
#: looking (the look would cost more than it can save).
QUICK_EXIT_MAX_OBJECTS = 200_000


def _nothing_left_to_finalize():
    """Whether ``Py_Exit`` could do nothing that shows: then the child ends by ``_exit`` at once.

    ``Py_FinalizeEx`` after a script waits for non-daemon threads, calls ``atexit`` handlers and
    ``threading``'s own exit hooks, flushes ``sys.stdout``/``sys.stderr``, collects garbage (running
    ``__del__``) and clears every module (running ``__del__``, closing and so flushing files,
    ending suspended generators' ``finally``, weakref callbacks); the rest frees memory. In a forked
    child that freeing writes to most of the inherited heap, copying each page it touches (~8 ms of
    the ~10 ms of a ``print(1)`` child here). So when none of those can happen, the exit is skipped:

    * no thread but the main one and no ``threading`` exit hook; the ``atexit`` handlers are run
      here first (the interpreter's own next step) and must leave no thread behind;
    * ``sys.stdout``/``sys.stderr`` are the interpreter's own, unbuffered (``PYTHONUNBUFFERED``:
      written through to the descriptor, nothing pending);
    * no ``gc.callbacks`` (the exit's collections call them), no trace or profile function;
    * no object made since the fork (:func:`gc.freeze` set the fork-server's apart) whose type has
      a finalizer (``__del__``: user classes, every ``io`` object, generators, coroutines) and no
      weak reference with a callback or proxy; objects the collector does not track (ints, strings,
      ``mmap``, sockets...) free only memory and descriptors, which the kernel does at exit.

    Anything else, or a doubt, returns ``False`` and the interpreter's own exit runs as under
    ``python main.py``.
    """
    try:
        if sys.gettrace() is not None or sys.getprofile() is not None:
            return False  # it would see the exit's Python code (and so this function's)
        threading = sys.modules.get("threading")
        if threading is not None and (threading.active_count() != 1 or threading._threading_atexits):
            return False
        # The interpreter's next step (after waiting for threads: there are none) is the atexit
        # handlers: run them here, as it would (an interpreter may register some at start-up, as
        # this machine's site-packages .pth does); ``Py_Exit`` then finds none left.
        import atexit
        atexit._run_exitfuncs()
        if sys.stdout is not sys.__stdout__ or sys.stderr is not sys.__stderr__:
            return False
        import _io
        for stream in (sys.stdout, sys.stderr):
            if stream is None or not stream.write_through or type(stream.buffer) is not _io.FileIO:
                return False
        threading = sys.modules.get("threading")
        if threading is not None and threading.active_count() != 1:
            return False
        if gc.callbacks:  # the exit's collections call them
            return False
        weak = (_weakref.ReferenceType, _weakref.ProxyType, _weakref.CallableProxyType)
        objects = gc.get_objects()
        if len(objects) > QUICK_EXIT_MAX_OBJECTS:
            return False
        kinds = set(map(type, objects))  # per type, not per object: 200k objects cost ~5 ms
        if any(hasattr(kind, "__del__") for kind in kinds):
            return False
        weak_kinds = {kind for kind in kinds if issubclass(kind, weak)}
        return not weak_kinds or all(_bookkeeping_weakref(obj) for obj in objects if type(obj) in weak_kinds)
    except Exception:  # noqa: BLE001 - any doubt: the interpreter's own exit
        return False
