"""Full isolation hides the host from a program's reads of ``/sys``, ``/proc``, the hostname and the
cgroup: each test compares what a program prints with what this test process reads on the host
(its hostname, ``boot_id``, network interfaces and MAC addresses, disks, cgroup path, mount points),
through the embedded sandbox and the live HTTP server (the ``run_code`` fixture). The programs only
read; nothing on the host is changed.
"""

from __future__ import annotations

import json
import os
import socket

import pytest

from judgebox.sandbox.isolation.childsetup import HOSTNAME
from judgebox.sandbox.isolation.view import PROC_MASKS, SYS_ENTRIES

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="full isolation needs root")

#: The program: everything it reads, as JSON (an unreadable path reads as "<ExceptionName>").
PROBE = r'''
import json, os, socket

def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return f"<{type(e).__name__}>"

def listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError as e:
        return f"<{type(e).__name__}>"

def writable(path):
    try:
        open(path, "w").close()
        return True
    except OSError:
        return False

net = listdir("/sys/class/net")
print(json.dumps({
    "gethostname": socket.gethostname(),
    "proc_hostname": read("/proc/sys/kernel/hostname").strip(),
    "nodename": os.uname().nodename,
    "etc_hosts": read("/etc/hosts"),
    "boot_id": read("/proc/sys/kernel/random/boot_id").strip(),
    "loadavg": read("/proc/loadavg"),
    "getloadavg": len(os.getloadavg()),
    "diskstats": read("/proc/diskstats"),
    "partitions": read("/proc/partitions"),
    "sys": listdir("/sys"),
    "sys_class_net": net,
    "sys_block": listdir("/sys/block"),
    "addresses": [read(f"/sys/class/net/{n}/address") for n in net] if isinstance(net, list) else [],
    "cgroup": read("/proc/self/cgroup"),
    "mountinfo": read("/proc/self/mountinfo"),
    "cpu_count": os.cpu_count(),
    "sys_cpus": sorted(n for n in listdir("/sys/devices/system/cpu") if n[3:].isdigit()),
    "masked": {n: read("/proc/" + n) if not os.path.isdir("/proc/" + n) else listdir("/proc/" + n)
               for n in ("interrupts", "softirqs", "vmstat", "swaps", "keys", "key-users", "acpi", "pressure")},
    "mask_writable": writable("/proc/loadavg"),
    "kept": {n: len(read("/proc/" + n)) > 0 for n in ("stat", "meminfo", "cpuinfo", "uptime", "self/status")},
    "init": {n: read("/proc/1/" + n) for n in ("mountinfo", "mounts", "environ")},
}))
'''


def host_read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def mount_points(mountinfo: str) -> dict[str, tuple[str, str]]:
    """Mount point -> (file system type, mount options) of a ``/proc/<pid>/mountinfo`` text."""
    out = {}
    for line in mountinfo.splitlines():
        fields = line.split()
        sep = fields.index("-")
        out[fields[4]] = (fields[sep + 1], fields[5])
    return out


@pytest.fixture
def seen(run_code) -> dict:
    r = run_code({"code": PROBE, "language": "python"})
    assert r.status == "Success", r
    out = json.loads(r.run_result.stdout)
    out["raw"] = r.run_result.stdout
    out["server_pid"] = run_code.pid
    return out


def test_the_hostname_is_the_sandboxs_own(seen):
    host = socket.gethostname()
    assert (seen["gethostname"], seen["proc_hostname"], seen["nodename"]) == (HOSTNAME,) * 3
    assert seen["etc_hosts"].split() == ["127.0.0.1", "localhost", "127.0.1.1", HOSTNAME, "::1", "localhost",
                                         "ip6-localhost", "ip6-loopback"]
    if host != HOSTNAME:
        assert host not in seen["etc_hosts"].split()


def test_boot_id_and_loadavg_are_neutral(seen):
    host_boot_id = host_read("/proc/sys/kernel/random/boot_id").strip()
    assert host_boot_id and host_boot_id not in seen["raw"]
    assert seen["boot_id"] == PROC_MASKS["sys/kernel/random/boot_id"].strip()
    assert seen["loadavg"] == "0.00 0.00 0.00 1/1 1\n"
    assert seen["getloadavg"] == 3  # os.getloadavg still works


def test_no_network_interface_disk_or_host_wide_counter_shows(seen):
    assert seen["sys_class_net"] == seen["sys_block"] == "<FileNotFoundError>"
    assert seen["sys"] == sorted({e.split("/")[2] for e in SYS_ENTRIES if os.path.isdir(e)})
    macs = {host_read(os.path.join("/sys/class/net", n, "address")).strip()
            for n in os.listdir("/sys/class/net")} - {"", "00:00:00:00:00:00"}
    assert [m for m in macs if m in seen["raw"]] == []
    disks = {line.split()[2] for line in host_read("/proc/diskstats").splitlines() if line.split()}
    assert seen["diskstats"] == "" and seen["partitions"].split() == ["major", "minor", "#blocks", "name"]
    assert [d for d in disks if d in seen["diskstats"] + seen["partitions"]] == []
    present = {n: os.path.exists("/proc/" + n) for n in seen["masked"]}
    assert seen["masked"] == {n: ([] if PROC_MASKS[n] is None else PROC_MASKS[n]) if present[n] else
                              "<FileNotFoundError>" for n in seen["masked"]}
    assert seen["mask_writable"] is False
    assert seen["kept"] == {"stat": True, "meminfo": True, "cpuinfo": True, "uptime": True, "self/status": True}


def test_cgroup_shows_the_root_not_the_hosts_path_nor_the_server_pid(seen):
    lines = seen["cgroup"].splitlines()
    assert lines and all(line.split(":", 2)[2] == "/" for line in lines), seen["cgroup"]
    assert f"run-{seen['server_pid']}-" not in seen["cgroup"]  # the run cgroups' names: judgebox/run-<pid>-<n>
    # this process's own cgroup paths on the host (the server's are below them) show nowhere
    host_paths = {line.split(":", 2)[2] for line in host_read("/proc/self/cgroup").splitlines()} - {"/"}
    assert [p for p in host_paths if p in seen["raw"]] == []


def test_mountinfo_shows_no_host_mount_but_the_views(seen):
    mounts = mount_points(seen["mountinfo"])
    host = mount_points(host_read("/proc/self/mountinfo"))
    assert sorted(mp for mp, (fstype, _) in mounts.items() if fstype in ("sysfs", "cgroup", "cgroup2")) == \
        sorted(e for e in SYS_ENTRIES if os.path.isdir(e))
    masks = {"/proc/" + n for n in PROC_MASKS if os.path.lexists("/proc/" + n)}
    assert masks <= set(mounts)
    # of the host's mount points under /sys, /run, /proc, /boot, /var, …, none but the view's own shows
    # (a host in a container has masks of its own over /proc entries)
    hidden = ("/sys", "/run", "/proc/", "/boot", "/var/", "/home", "/mnt", "/media", "/etc")
    shown = {mp for mp in mounts if mp in host and mp.startswith(hidden)}
    assert shown <= {*SYS_ENTRIES, "/var/tmp", *masks}, shown
    assert [mp for mp in masks if not mounts[mp][1].startswith("ro,")] == []
    assert [mp for mp in mounts if mp.startswith("/sys") and not mounts[mp][1].startswith("ro,")] == []


def test_cpu_count_is_the_hosts(seen):
    assert seen["cpu_count"] == os.cpu_count()
    assert len(seen["sys_cpus"]) == len([n for n in os.listdir("/sys/devices/system/cpu") if n[3:].isdigit()])


#: Each runtime's CPU count, and what it is on the host: the CPUs this process may run on (the JVM and
#: Go read the affinity mask), or the online CPUs (glibc's sysconf and libuv read /sys and /proc/stat).
CPU_PROGRAMS = {
    "java": ("public class Main { public static void main(String[] a) { System.out.println("
             "Runtime.getRuntime().availableProcessors()); } }", len(os.sched_getaffinity(0))),
    "nodejs": ("console.log(require('os').cpus().length)", os.cpu_count()),
    "go": ("package main\nimport (\"fmt\"; \"runtime\")\nfunc main() { fmt.Println(runtime.NumCPU()) }",
           len(os.sched_getaffinity(0))),
    "cpp": ("#include <cstdio>\n#include <unistd.h>\nint main() { printf(\"%ld\\n\", sysconf(_SC_NPROCESSORS_ONLN)); }",
            os.cpu_count()),
}


@pytest.mark.parametrize("language", sorted(CPU_PROGRAMS))
def test_runtimes_count_the_hosts_cpus(local_sandbox, language):
    if language not in local_sandbox.executor.languages():
        pytest.skip(f"{language} is not installed")
    code, host = CPU_PROGRAMS[language]
    r = local_sandbox.run_code({"code": code, "language": language, "compile_timeout": 60})
    assert r.status == "Success", r
    assert r.run_result.stdout == f"{host}\n"


def test_more_host_wide_proc_files_are_neutral(local_sandbox):
    """The host's boot command line, cgroup hierarchy counts, open-file and inode counters, consoles,
    devices, misc, iomem and ioports were readable in a run; each is now a neutral or empty file."""
    names = ("cmdline", "cgroups", "sys/fs/file-nr", "sys/fs/inode-nr", "consoles", "devices", "misc", "iomem",
             "ioports")
    code = ("import json\nout = {}\nfor n in %r:\n    try:\n        out[n] = open('/proc/' + n).read()\n"
            "    except OSError as e:\n        out[n] = e.strerror\nprint(json.dumps(out))" % (names,))
    seen = json.loads(local_sandbox.run_code({"code": code, "language": "python"}).run_result.stdout)
    with open("/proc/cmdline") as f:
        host_cmdline = f.read()
    assert seen["cmdline"] == "sandbox\n" != host_cmdline
    assert seen["cgroups"] == "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
    assert (seen["sys/fs/file-nr"], seen["sys/fs/inode-nr"]) == ("0\t0\t0\n", "0\t0\n")
    assert all(seen[n] in ("", "No such file or directory") for n in ("consoles", "devices", "misc", "iomem", "ioports"))


def test_the_pid_namespace_init_shows_neither_the_servers_mounts_nor_its_environment(seen):
    """Issue 46: the run's init lives in the server's mount namespace; its mount table listed the
    executor's mounts (host paths, concurrent runs' disks) and its environment the server's pid."""
    assert seen["init"] == {"mountinfo": "", "mounts": "", "environ": ""}
