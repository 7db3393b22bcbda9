"""The compile cache: a hit only for the very same compile, never a stale or corrupted output.

Each test gets a fresh cache (its own ``workdir_root``) and real compiles; precompiled headers are
off here (they have their own tests in ``test_pch.py``).
"""

from __future__ import annotations

import base64
import concurrent.futures
import dataclasses
import os
import shutil
import stat
import tempfile
import uuid

import pytest

from judgebox.sandbox import LocalSandbox
from judgebox.sandbox.languages import RECIPES
from judgebox.sandbox.speedups.compile_cache import CompileCache, compile_key

needs_gpp = pytest.mark.skipif(not shutil.which("g++"), reason="g++ not installed")


@pytest.fixture
def sandbox():
    root = tempfile.mkdtemp(prefix="jb-cc-")
    os.chmod(root, 0o711)
    try:
        yield LocalSandbox(workdir_root=root, prebuilt_artifacts=False)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def entries(sb: LocalSandbox) -> list[str]:
    root = sb.executor.compile_cache.root
    return sorted(os.path.join(root, n) for n in os.listdir(root) if len(n) == 64)


def cpp(value: str) -> str:
    """A distinct program per test run (so no earlier cache state can matter) printing ``value``."""
    return f'#include <cstdio>\n// {uuid.uuid4()}\nint main() {{ std::puts("{value}"); }}\n'


def stdout(sb: LocalSandbox, body: dict) -> str:
    r = sb.run_code({"compile_timeout": 120, **body})
    assert r.status == "Success", r
    return r.run_result.stdout


@needs_gpp
def test_same_compile_hits_and_returns_the_same_result(sandbox):
    code = cpp("one")
    first = sandbox.run_code({"code": code, "language": "cpp", "compile_timeout": 120})
    second = sandbox.run_code({"code": code, "language": "cpp", "compile_timeout": 120})
    cache = sandbox.executor.compile_cache
    assert (cache.misses, cache.hits) == (1, 1)
    assert first.run_result.stdout == second.run_result.stdout == "one\n"
    assert second.compile_result.status == "Finished" and second.compile_result.return_code == 0
    assert second.compile_result.stderr == first.compile_result.stderr
    assert len(entries(sandbox)) == 1


@needs_gpp
def test_compiler_warnings_come_back_with_a_hit(sandbox):
    code = "#include <cstdio>\n#warning judgebox-warned\nint main() { std::puts(\"w\"); }\n// " + str(uuid.uuid4())
    first = sandbox.run_code({"code": code, "language": "cpp", "compile_timeout": 120})
    second = sandbox.run_code({"code": code, "language": "cpp", "compile_timeout": 120})
    assert sandbox.executor.compile_cache.hits == 1
    assert "judgebox-warned" in first.compile_result.stderr
    assert second.compile_result.stderr == first.compile_result.stderr


@pytest.mark.slow
@needs_gpp
def test_changed_source_never_hits(sandbox):
    base = cpp("A")
    assert stdout(sandbox, {"code": base, "language": "cpp"}) == "A\n"
    assert stdout(sandbox, {"code": base.replace('"A"', '"B"'), "language": "cpp"}) == "B\n"
    assert stdout(sandbox, {"code": base + " ", "language": "cpp"}) == "A\n"  # one byte more: a new compile
    assert sandbox.executor.compile_cache.hits == 0


@pytest.mark.slow
@needs_gpp
def test_changed_extra_file_never_hits(sandbox):
    code = f'#include <cstdio>\n#include "value.h"\n// {uuid.uuid4()}\nint main() {{ std::printf("%d\\n", V); }}\n'

    def with_value(v: int) -> dict:
        return {"code": code, "language": "cpp", "files": {"value.h": base64.b64encode(f"#define V {v}\n".encode()).decode()}}

    assert stdout(sandbox, with_value(1)) == "1\n"
    assert stdout(sandbox, with_value(2)) == "2\n"
    assert stdout(sandbox, with_value(1)) == "1\n"
    assert sandbox.executor.compile_cache.hits == 1


@pytest.mark.slow
@needs_gpp
def test_changed_flags_never_hit(sandbox, monkeypatch):
    code = f'#include <cstdio>\n// {uuid.uuid4()}\nint main() {{ std::printf("%d\\n", N); }}\n'
    base = RECIPES["cpp"]
    for n in ("1", "2"):
        monkeypatch.setitem(RECIPES, "cpp", dataclasses.replace(base, compile=(*base.compile, f"-DN={n}")))
        assert stdout(sandbox, {"code": code, "language": "cpp"}) == f"{n}\n"
    assert sandbox.executor.compile_cache.hits == 0
    assert compile_key("cpp", ["g++", "-O2"], "t", {}) != compile_key("cpp", ["g++", "-O0"], "t", {})
    assert compile_key("cpp", ["g++"], "gcc 12", {}) != compile_key("cpp", ["g++"], "gcc 13", {})


@pytest.mark.slow
@needs_gpp
@pytest.mark.parametrize("damage", ["binary", "manifest", "missing"])
def test_corrupted_entry_is_detected_and_recompiled(sandbox, damage):
    code = cpp("intact")
    assert stdout(sandbox, {"code": code, "language": "cpp"}) == "intact\n"
    (entry,) = entries(sandbox)
    binary = os.path.join(entry, "files", "main")
    if damage == "binary":
        data = bytearray(open(binary, "rb").read())
        data[len(data) // 2] ^= 0xFF
        open(binary, "wb").write(bytes(data))
    elif damage == "manifest":
        open(os.path.join(entry, "manifest.json"), "w").write('{"files": ')
    else:
        os.unlink(binary)
    assert stdout(sandbox, {"code": code, "language": "cpp"}) == "intact\n"
    cache = sandbox.executor.compile_cache
    assert (cache.corrupt, cache.hits) == (1, 0)
    assert stdout(sandbox, {"code": code, "language": "cpp"}) == "intact\n"  # the new entry is sound
    assert cache.hits == 1 and len(entries(sandbox)) == 1


@pytest.mark.slow
@needs_gpp
def test_concurrent_identical_compiles_leave_one_entry(sandbox):
    code = cpp("together")
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda _: stdout(sandbox, {"code": code, "language": "cpp"}), range(4)))
    cache = sandbox.executor.compile_cache
    assert outs == ["together\n"] * 4
    assert (cache.misses, cache.hits) == (1, 3)  # compiled once, the others waited for it
    assert len(entries(sandbox)) == 1
    assert not [n for n in os.listdir(cache.root) if n.startswith(("tmp-", "trash-"))]


def test_two_caches_storing_one_key_keep_one_entry(tmp_path):
    """Two servers on one root racing on a key: the rename is atomic, the loser's copy is dropped."""
    work = tmp_path / "run"
    work.mkdir()
    (work / "main").write_bytes(b"\x7fELF-binary")
    a, b = CompileCache(str(tmp_path / "cc"), 1 << 20), CompileCache(str(tmp_path / "cc"), 1 << 20)
    key = compile_key("cpp", ["g++"], "t", {"main.cpp": b"x"})
    assert a.store(key, str(work), ["main"], "", "") and b.store(key, str(work), ["main"], "", "")
    assert sorted(os.listdir(tmp_path / "cc")) == [key]
    assert b.lookup(key).files == {"main": (b"\x7fELF-binary", 0o644)}


def test_least_recently_used_entries_are_evicted(tmp_path):
    work = tmp_path / "run"
    work.mkdir()
    cache = CompileCache(str(tmp_path / "cc"), 25_000)
    keys = [compile_key("cpp", ["g++"], "t", {"main.cpp": bytes([i])}) for i in range(3)]
    for i, key in enumerate(keys[:2]):
        (work / "main").write_bytes(bytes([i]) * 10_000)
        assert cache.store(key, str(work), ["main"], "", "")
        os.utime(os.path.join(cache.root, key), (1_000_000 + i, 1_000_000 + i))
    assert cache.lookup(keys[0]) is not None  # now the most recently used
    (work / "main").write_bytes(b"\2" * 10_000)
    assert cache.store(keys[2], str(work), ["main"], "", "")  # 30 kB > 25 kB: the LRU entry goes
    assert cache.lookup(keys[1]) is None
    assert cache.lookup(keys[0]) is not None and cache.lookup(keys[2]) is not None
    assert cache.size() <= 25_000


def test_an_entry_another_process_evicted_meanwhile_does_not_fail_the_store(tmp_path):
    """Two servers share a cache folder: one lists the entries to bound the cache, the other evicts
    one of them before it is looked at. The store still succeeds (it failed with FileNotFoundError,
    the compile with it, seen in a parity run beside another test run)."""
    work = tmp_path / "run"
    work.mkdir()
    cache, other = CompileCache(str(tmp_path / "cc"), 15_000), CompileCache(str(tmp_path / "cc"), 15_000)
    keys = [compile_key("cpp", ["g++"], "t", {"main.cpp": bytes([i])}) for i in range(2)]
    (work / "main").write_bytes(b"\1" * 10_000)
    assert cache.store(keys[0], str(work), ["main"], "", "")
    listed = cache._entries

    def listed_then_evicted():
        entries = listed()
        other._remove(os.path.join(other.root, keys[0]))
        return entries

    cache._entries = listed_then_evicted
    assert cache.store(keys[1], str(work), ["main"], "", "")  # 20 kB > 15 kB: a bound pass runs
    assert cache.lookup(keys[0]) is None and cache.lookup(keys[1]) is not None


def test_outputs_through_links_are_never_cached(tmp_path):
    """A run that replaces its binary with a link cannot make the server cache a file outside."""
    work = tmp_path / "run"
    work.mkdir()
    secret = tmp_path / "secret"
    secret.write_bytes(b"server-only")
    (work / "main").symlink_to(secret)
    cache = CompileCache(str(tmp_path / "cc"), 1 << 20)
    assert not cache.store(compile_key("cpp", [], "t", {}), str(work), ["main"], "", "")
    assert os.listdir(tmp_path / "cc") == []


@pytest.mark.slow
@needs_gpp
def test_cache_is_private_to_the_server(sandbox):
    stdout(sandbox, {"code": cpp("p"), "language": "cpp"})
    root = sandbox.executor.compile_cache.root
    st = os.stat(root)
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
    assert not os.path.relpath(root, sandbox.executor.root).startswith("run-")


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("javac"), reason="javac not installed")
def test_java_classes_with_package_and_nested_class_are_restored(sandbox):
    code = (f"package p;\n// {uuid.uuid4()}\npublic class Main {{\n  static class In {{ int v = 7; }}\n"
            "  public static void main(String[] a) { System.out.println(new In().v); }\n}\n")
    assert stdout(sandbox, {"code": code, "language": "java"}) == "7\n"
    assert stdout(sandbox, {"code": code, "language": "java"}) == "7\n"
    assert sandbox.executor.compile_cache.hits == 1
    (entry,) = entries(sandbox)
    assert sorted(os.listdir(os.path.join(entry, "files", "p"))) == ["Main$In.class", "Main.class"]


@pytest.mark.parametrize("language, code", [
    ("rust", 'fn main() {{ println!("r"); }} // {tag}\n'),
    ("go", 'package main\n\nimport "fmt"\n\n// {tag}\nfunc main() {{ fmt.Println("r") }}\n'),
])
@pytest.mark.slow
def test_rust_and_go_binaries_hit(sandbox, language, code):
    if language not in sandbox.executor.languages():
        pytest.skip(f"{language} not installed")
    code = code.format(tag=uuid.uuid4())
    assert stdout(sandbox, {"code": code, "language": language}) == "r\n"
    assert stdout(sandbox, {"code": code, "language": language}) == "r\n"
    assert sandbox.executor.compile_cache.hits == 1


@pytest.mark.slow
@needs_gpp
def test_failed_compiles_are_not_cached(sandbox):
    code = f"int main() {{ return x; }} // {uuid.uuid4()}\n"
    for _ in range(2):
        r = sandbox.run_code({"code": code, "language": "cpp", "compile_timeout": 120})
        assert r.status == "Failed" and r.compile_result.return_code != 0
    assert sandbox.executor.compile_cache.hits == 0 and entries(sandbox) == []
