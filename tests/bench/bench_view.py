"""Benchmark: what a run's filesystem and process view costs, built by judgebox's own child set-up
versus by ``bubblewrap`` (the measurement behind :mod:`judgebox.sandbox.isolation.view`' design).

Each row starts ``/usr/bin/true`` (so nothing but the set-up is timed) ``--runs`` times, interleaved:

* ``spawn``: ``subprocess.run`` with no set-up at all;
* ``minimal``: :func:`judgebox.sandbox.process.run_process` under ``isolation="minimal"`` (cgroup, rlimits);
* ``full``: the same under the default full isolation (mount, PID, IPC and network namespaces, the
  view, the disk tmpfs, run uid, no-new-privs, seccomp);
* ``bwrap``: the ``minimal`` row with ``bwrap`` building an equivalent view (``/usr`` read-only,
  ``/proc``, ``/dev``, tmpfs ``/tmp``, the working folder, new PID/IPC/network namespaces) around
  ``/usr/bin/true``: what the bubblewrap design would cost instead of ``full`` (skipped when
  bubblewrap is not installed; bwrap itself runs without judgebox's seccomp filter, which refuses
  namespaces).

    python tests/bench/bench_view.py [--runs 200]

Needs root. Prints p50/p90 in ms per row and the differences to ``spawn`` and to ``minimal``. Run
it on a quiet machine, or under ``chrt -f 10`` (real-time priority) on a shared one.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from judgebox.sandbox import SandboxSettings  # noqa: E402
from judgebox.sandbox.executor import Executor  # noqa: E402
from judgebox.sandbox.limits import RunLimits  # noqa: E402
from judgebox.sandbox.process import run_process  # noqa: E402

TRUE = "/usr/bin/true"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    executors = {mode: Executor(SandboxSettings(isolation=mode)) for mode in ("minimal", "full")}
    limits = RunLimits.for_timeout(10)

    def under(mode: str, wrap=None):
        ex = executors[mode]

        def one() -> None:
            with ex.isolation.for_run(ex.root, 256) as iso:
                res = run_process([*(wrap(iso.workdir) if wrap else []), TRUE], cwd=iso.workdir, env={"PATH": "/usr/bin"}, limits=limits,
                                  preexec=iso.preexec, user=iso.user, group=iso.group, kill_all=iso.kill_all,
                                  spawning=iso.spawning, seal=None if wrap else iso.seal)  # bwrap unshares
                assert res.return_code == 0, res
        return one

    def spawn() -> None:
        subprocess.run([TRUE], check=True)

    rows = {"spawn": spawn, "minimal": under("minimal"), "full": under("full")}
    bwrap = shutil.which("bwrap")
    if bwrap:
        rows["bwrap"] = under("minimal", lambda workdir: [
            bwrap, "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            "--bind", workdir, workdir, "--chdir", workdir, "--unshare-pid", "--unshare-ipc", "--unshare-net",
            "--die-with-parent"])
    times: dict[str, list[float]] = {name: [] for name in rows}
    for name, call in rows.items():  # warm up
        call()
    for _ in range(args.runs):
        for name, call in rows.items():
            t = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - t)
    base, minimal = statistics.median(times["spawn"]), statistics.median(times["minimal"])
    print(f"{'mode':<8} {'p50 ms':>8} {'p90 ms':>8} {'over spawn':>11} {'over minimal':>13}"
          f"   ({args.runs} runs of {TRUE})")
    for name, ts in times.items():
        p50, p90 = statistics.median(ts), statistics.quantiles(ts, n=10)[-1]
        print(f"{name:<8} {p50 * 1000:>8.2f} {p90 * 1000:>8.2f} {(p50 - base) * 1000:>+11.2f}"
              f" {(p50 - minimal) * 1000:>+13.2f}")


if __name__ == "__main__":
    main()
