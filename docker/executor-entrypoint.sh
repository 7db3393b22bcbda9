#!/bin/sh
# Entrypoint of the executor image: cut the way out, make the container's own cgroups writable for
# full isolation, give up the capabilities the server does not need, serve.
#
# 1. Docker's `internal: true` networks still give each container a default route to the bridge,
#    where the host drops the packets: with NET_ADMIN the default routes are deleted, so any address
#    outside the compose network fails at once with ENETUNREACH and no packet leaves the container.
#    With JUDGEBOX_KEEP_DEFAULT_ROUTES=1 (Kubernetes: pods reach each other through the default
#    route, and the NetworkPolicy denies egress) or without NET_ADMIN they stay, with a notice.
# 2. Full isolation (JUDGEBOX_ISOLATION=full, the default) makes a memory/pids/CPU cgroup per run
#    below the container's own cgroup. Docker mounts the container's cgroups read-only: with
#    SYS_ADMIN each cgroup mount (the container's own subtree: its cgroup namespace on cgroup v2,
#    its /docker/<id> folder on v1) is remounted read-write, as a bind mount of this container only.
# 3. Minimal isolation (no network namespace per run): an iptables owner match refuses every packet of
#    the run uids, loopback included, unless JUDGEBOX_ALLOW_NETWORK=1.
# 4. Capabilities: full isolation keeps SYS_ADMIN (each run's namespaces and mounts), NET_ADMIN (the
#    loopback of each run's fresh network namespace) and MKNOD (each run's /dev); minimal drops all
#    three. SETPCAP goes in both. Dropped from the bounding set: neither the server nor any program
#    can get them back, and programs run under their own uid with no capability at all.
set -eu
CAP_SETPCAP=8
CAP_NET_ADMIN=12
CAP_SYS_ADMIN=21
bounding=$((0x$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)))
has_cap() { [ $(((bounding >> $1) & 1)) -eq 1 ]; }
isolation=${JUDGEBOX_ISOLATION:-full}

if [ "${JUDGEBOX_KEEP_DEFAULT_ROUTES:-0}" = 1 ]; then
  echo "judgebox-executor: default routes kept (JUDGEBOX_KEEP_DEFAULT_ROUTES=1; egress must be denied by the platform)" >&2
elif has_cap "$CAP_NET_ADMIN"; then
  for family in -4 -6; do
    while ip "$family" route show default 2>/dev/null | grep -q .; do
      ip "$family" route del default
    done
  done
  echo "judgebox-executor: default routes removed; outside addresses are unreachable" >&2
else
  echo "judgebox-executor: no NET_ADMIN, default routes kept (egress must be denied by the platform)" >&2
fi

if [ "$isolation" = full ] && has_cap "$CAP_SYS_ADMIN"; then
  # the read-only mounts of the controllers a run's cgroup uses (memory, pids, cpu, cpuacct,
  # freezer; on v2 the unified one), never devices: field 4 of /proc/self/mounts holds the options
  for point in $(awk '$4 ~ /(^|,)ro(,|$)/ && ($3 == "cgroup2" || ($3 == "cgroup" &&
                      $4 ~ /(^|,)(memory|pids|cpu|cpuacct|freezer)(,|$)/)) {print $2}' /proc/self/mounts); do
    mount -o remount,bind,rw "$point"
  done
  echo "judgebox-executor: the container's own cgroups are writable (a cgroup per run)" >&2
fi

if [ "$isolation" != full ] && [ "${JUDGEBOX_ALLOW_NETWORK:-0}" != 1 ]; then
  # minimal isolation: no network namespace per run, so every packet of a run uid is refused here,
  # loopback included (the executor's own API, other runs' listeners), as its first rule
  first=${JUDGEBOX_UID_BASE:-61000}
  last=$((first + ${JUDGEBOX_UID_COUNT:-1024} - 1))
  if ! has_cap "$CAP_NET_ADMIN" || ! command -v iptables >/dev/null 2>&1; then
    echo "judgebox-executor: cannot cut the run uids off the network (no NET_ADMIN or no iptables);" \
         "set JUDGEBOX_ALLOW_NETWORK=1 to run without it" >&2
    exit 1
  fi
  for tables in iptables ip6tables; do
    "$tables" -w -I OUTPUT 1 -m owner --uid-owner "$first-$last" -j REJECT
  done
  echo "judgebox-executor: run uids $first-$last cannot send a packet" >&2
  # no PID namespace per run either: /proc shows a uid only its own processes (the server, root,
  # sees all), so a run cannot read other runs' or the server's command lines
  if has_cap "$CAP_SYS_ADMIN" && mount -o remount,hidepid=invisible /proc 2>/dev/null \
      || has_cap "$CAP_SYS_ADMIN" && mount -o remount,hidepid=2 /proc 2>/dev/null; then
    echo "judgebox-executor: /proc shows each run uid only its own processes" >&2
  fi
fi

drop=
if [ "$isolation" = full ]; then
  : # SYS_ADMIN, NET_ADMIN and MKNOD stay for each run's namespaces, loopback and /dev
else
  drop=-sys_admin,-net_admin,-mknod
fi
if has_cap "$CAP_SETPCAP"; then
  drop=${drop:+$drop,}-setpcap
  exec setpriv --inh-caps="$drop" --bounding-set="$drop" -- judgebox serve --host 0.0.0.0 --port 8080 "$@"
fi
exec judgebox serve --host 0.0.0.0 --port 8080 "$@"
