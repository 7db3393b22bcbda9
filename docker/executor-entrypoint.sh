#!/bin/sh
# Entrypoint of the executor image: cut the way out, give up the capabilities that did it, serve.
#
# Docker's `internal: true` networks still give each container a default route to the bridge, where
# the host drops the packets: a program's connect() to an outside address would hang until its
# timeout. With NET_ADMIN (compose.yaml grants it for this step only) the default routes are deleted,
# so any address outside the compose network fails at once with ENETUNREACH and no packet leaves
# the container. NET_ADMIN and SETPCAP are then dropped from the bounding set before the server
# starts: neither the server nor any program can get them back. Without NET_ADMIN (Kubernetes, where
# the NetworkPolicy denies egress) the routes are left alone and a notice is printed.
set -eu
CAP_SETPCAP=8
CAP_NET_ADMIN=12
bounding=$((0x$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)))
has_cap() { [ $(((bounding >> $1) & 1)) -eq 1 ]; }

if has_cap "$CAP_NET_ADMIN"; then
  for family in -4 -6; do
    while ip "$family" route show default 2>/dev/null | grep -q .; do
      ip "$family" route del default
    done
  done
  echo "judgebox-executor: default routes removed; outside addresses are unreachable" >&2
else
  echo "judgebox-executor: no NET_ADMIN, default routes kept (egress must be denied by the platform)" >&2
fi

if has_cap "$CAP_NET_ADMIN" && has_cap "$CAP_SETPCAP"; then
  exec setpriv --inh-caps=-net_admin,-setpcap --bounding-set=-net_admin,-setpcap -- \
    judgebox serve --host 0.0.0.0 --port 8080 "$@"
fi
exec judgebox serve --host 0.0.0.0 --port 8080 "$@"
