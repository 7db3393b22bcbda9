"""A class-data-sharing archive of ``javac`` itself (see :mod:`judgebox.sandbox.speedups.prebuilt`).

``javac`` is a Java program: most of a small compile is the JVM loading and verifying javac's own
classes. An application class-data archive (JEP 310/350, ``-XX:ArchiveClassesAtExit``, JDK 13+) made
once from a training compile lets every later ``javac`` map those classes instead (about 1/3 less
CPU here). The JVM checks the archive against itself and silently ignores one that does not match,
and class files come out byte-identical, so it is only a speed-up. The other javac speed-ups (C1
only, serial GC, no perf-data file) are plain options in the Java recipe (:mod:`judgebox.sandbox.languages`).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from typing import Optional, Sequence

from .builds import run_build
from .compile_cache import toolchain_id
from .prebuilt import Plan, Prebuilt

#: The archive's file name in its folder.
ARCHIVE = "javac.jsa"

#: The training compile: the library parts typical solutions use (I/O, collections, streams, lambdas).
_TRAINING = """import java.io.*;
import java.util.*;
import java.util.function.*;
import java.util.stream.*;

public class Main {
    record Pair(int a, long b) {}
    interface Op { long apply(long x); }
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        Scanner sc = new Scanner(System.in);
        List<Integer> xs = new ArrayList<>(List.of(3, 1, 2));
        Map<String, Integer> m = new HashMap<>(); m.merge("a", 1, Integer::sum);
        TreeMap<Long, Pair> t = new TreeMap<>(); t.put(1L, new Pair(1, 2L));
        PriorityQueue<long[]> pq = new PriorityQueue<>((p, q) -> Long.compare(p[0], q[0]));
        Deque<Integer> dq = new ArrayDeque<>();
        Function<Integer, Integer> f = x -> x * 2; Op op = x -> x + 1;
        String s = xs.stream().map(f).sorted(Comparator.reverseOrder()).map(String::valueOf).collect(Collectors.joining(" "));
        int[] arr = IntStream.range(0, 10).toArray(); Arrays.sort(arr);
        StringBuilder sb = new StringBuilder(); sb.append(String.format("%d %s%n", arr.length, s));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out)));
        out.println(sb + " " + op.apply(1) + " " + Math.max(1, 2) + " " + m + t + pq + dq);
        out.flush();
    }
}
"""


def javac_key(argv: Sequence[str]) -> Optional[tuple[str, ...]]:
    """``(javac, *its -J options)`` of a javac command (the archive must match the JVM options), or ``None``."""
    if not argv or os.path.basename(argv[0]) != "javac":
        return None
    return (argv[0], *(a for a in argv[1:] if a.startswith("-J")))


def javac_archives(root: str) -> Prebuilt:
    """The javac archives kept in ``root``; ``args(javac_key(argv))`` is ``["-J-XX:SharedArchiveFile=..."]`` or ``[]``."""
    return Prebuilt(root, _plan, limit=2)


def _plan(key: tuple[str, ...]) -> Optional[Plan]:
    javac, jflags = key[0], key[1:]
    version = subprocess.run([javac, "-version"], capture_output=True, text=True, timeout=120)
    if version.returncode != 0:
        return None

    def build(folder: str) -> None:
        with tempfile.TemporaryDirectory(prefix="judgebox-javac-train-") as work:
            with open(os.path.join(work, "Main.java"), "w") as f:
                f.write(_TRAINING)
            out = run_build([javac, *jflags, f"-J-XX:ArchiveClassesAtExit={os.path.join(folder, ARCHIVE)}",
                             "-encoding", "UTF-8", "-d", work, os.path.join(work, "Main.java")], 600)
        if out.returncode != 0 or not os.path.isfile(os.path.join(folder, ARCHIVE)):
            raise RuntimeError(f"javac training exited {out.returncode}: {(out.stdout + out.stderr)[-2000:]}")

    return Plan(ident="\0".join((toolchain_id(javac, version.stdout + version.stderr), *jflags)),
                product=ARCHIVE, build=build,
                args=lambda folder: [f"-J-XX:SharedArchiveFile={os.path.join(folder, ARCHIVE)}"])
