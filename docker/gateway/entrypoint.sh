#!/bin/sh
# Render nginx.conf from the template and run nginx in the foreground.
# Environment (seconds):
#   JUDGEBOX_GATEWAY_TIMEOUT          longest wait for an executor's answer before 504 (default 600)
#   JUDGEBOX_GATEWAY_CONNECT_TIMEOUT  connect timeout per replica before trying the next (default 2)
#   JUDGEBOX_UPSTREAM                 service name and port of the executors (default executor:8080)
set -eu
timeout=${JUDGEBOX_GATEWAY_TIMEOUT:-600}
connect=${JUDGEBOX_GATEWAY_CONNECT_TIMEOUT:-2}
upstream=${JUDGEBOX_UPSTREAM:-executor:8080}
for v in "$timeout" "$connect"; do
  case "$v" in ''|*[!0-9]*) echo "judgebox-gateway: timeouts must be whole seconds, got '$v'" >&2; exit 2;; esac
done
upstream_port=${upstream##*:}
sed -e "s/@TIMEOUT@/${timeout}/g" -e "s/@CONNECT_TIMEOUT@/${connect}/g" -e "s/@UPSTREAM@/${upstream}/g" \
  -e "s/@UPSTREAM_PORT@/${upstream_port}/g" \
  /etc/nginx/nginx.conf.template >/etc/nginx/nginx.conf
nginx -t -q
exec nginx -g 'daemon off;'
