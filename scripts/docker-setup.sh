#!/usr/bin/env bash
# CI's offline path to the executor images: start the Docker engine if it is not running, build a
# Debian base image with debootstrap + `docker import` (no registry needed), build a wheelhouse of
# judgebox and its dependencies with pip on the host (containers here cannot reach PyPI over TLS)
# and one of the program runtime's `default` profile (wheels + an npm cache), then build the compose
# images from them. Idempotent: the base image and the wheels are cached (image by name, wheels under
# .ci/cache keyed by pyproject.toml and the runtime profiles), so a second run only rebuilds the
# judgebox wheel and the image layers that changed.
#
# Environment (all optional):
#   JUDGEBOX_BASE_IMAGE   name of the imported base image       (default judgebox-base:bookworm)
#   JUDGEBOX_CI_CACHE     cache folder                          (default .ci/cache)
#   DEBIAN_MIRROR         mirror for debootstrap                (default http://deb.debian.org/debian)
#   COMPOSE_PROJECT_NAME  compose project of the build           (default judgebox)
# Exit codes: 0 images built; 3 the Docker engine cannot be started here (tests skip on it); other
# non-zero: a real failure (tests fail on it).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CACHE=${JUDGEBOX_CI_CACHE:-$ROOT/.ci/cache}
BASE_IMAGE=${JUDGEBOX_BASE_IMAGE:-judgebox-base:bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
WHEELHOUSE=$CACHE/wheelhouse
log() { printf '[docker-setup %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

start_engine() {
  docker info >/dev/null 2>&1 && return 0
  if ! command -v dockerd >/dev/null 2>&1; then log "no dockerd on PATH"; return 3; fi
  log "starting dockerd (log: /var/log/dockerd.log)"
  (dockerd >/var/log/dockerd.log 2>&1 &)
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && return 0; sleep 1; done
  log "dockerd did not answer within 60 s:"; tail -n 20 /var/log/dockerd.log >&2 || true
  return 3
}

build_base_image() {
  if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then log "base image $BASE_IMAGE cached"; return; fi
  local dir; dir=$(mktemp -d /var/tmp/judgebox-rootfs.XXXXXX)
  log "debootstrap bookworm into $dir"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$dir" "$MIRROR" \
    >"$CACHE/debootstrap.log" 2>&1 || { tail -n 30 "$CACHE/debootstrap.log" >&2; rm -rf "$dir"; return 1; }
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
  tar -C "$dir" -c . | docker import -c 'CMD ["/bin/bash"]' - "$BASE_IMAGE" >/dev/null
  rm -rf "$dir"
  log "imported $BASE_IMAGE"
}

build_wheelhouse() {
  mkdir -p "$WHEELHOUSE"
  local stamp; stamp=$(cat pyproject.toml docker/requirements-image.txt | sha256sum | cut -c1-16)
  if [ "$(cat "$WHEELHOUSE/.stamp" 2>/dev/null)" != "$stamp" ]; then
    log "downloading dependency wheels into $WHEELHOUSE"
    rm -f "$WHEELHOUSE"/*.whl
    python3 -m pip wheel -q -w "$WHEELHOUSE" . -r docker/requirements-image.txt
    echo "$stamp" >"$WHEELHOUSE/.stamp"
  fi
  rm -f "$WHEELHOUSE"/judgebox-*.whl
  python3 -m pip wheel -q --no-deps -w "$WHEELHOUSE" .
  log "wheelhouse ready: $(ls "$WHEELHOUSE"/*.whl | wc -l) wheels"
}

build_runtime_wheels() {
  # the executor image builds the `default` runtime profile from these, offline
  local dir=$CACHE/runtime-wheels stamp
  stamp=$(cat sandbox/runtime/profiles.py scripts/docker-setup.sh | sha256sum | cut -c1-16)
  if [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then log "runtime wheels cached"; return; fi
  rm -rf "$dir" && mkdir -p "$dir"
  log "downloading the default runtime's wheels and npm packages into $dir"
  (cd sandbox && python3 -c 'from runtime.profiles import PROFILES; p = PROFILES["default"]
print("\n".join(p.python)); print("\n".join("npm:" + n for n in p.node))') >"$dir/packages.txt"
  grep -v '^npm:' "$dir/packages.txt" >"$dir/requirements.txt"
  python3 -m pip wheel -q -w "$dir" -r "$dir/requirements.txt"
  # the image's offline install needs every package of the tree (tsx pulls esbuild and its platform
  # binary) as `npm cache add` stores it (the image's npm 9 does not read what a newer npm's install
  # caches): an install (thrown away) finds the tree, then each installed name@version is added
  # shellcheck disable=SC2046
  npm install --prefix "$dir/npm-prefetch" --cache "$dir/npm-prefetch-cache" --no-audit --no-fund \
    $(sed -n 's/^npm://p' "$dir/packages.txt") >/dev/null
  (cd "$dir/npm-prefetch" && node -e 'const fs = require("fs"); const lock = require("./package-lock.json").packages;
for (const [path, p] of Object.entries(lock)) if (path && fs.existsSync(path))
  console.log((p.name || path.split("node_modules/").pop()) + "@" + p.version)') \
    | xargs npm cache add --cache "$dir/npm-cache" >/dev/null
  rm -rf "$dir/npm-prefetch" "$dir/npm-prefetch-cache"
  echo "$stamp" >"$dir/.stamp"
}

compose() {
  if docker compose version >/dev/null 2>&1; then docker compose "$@"; else docker-compose "$@"; fi
}

main() {
  mkdir -p "$CACHE"
  start_engine || exit $?
  build_base_image
  build_wheelhouse
  build_runtime_wheels
  log "building compose images"
  local t0=$SECONDS
  BASE_IMAGE=$BASE_IMAGE WHEELHOUSE=${WHEELHOUSE#"$ROOT"/} RUNTIME_WHEELS=${CACHE#"$ROOT"/}/runtime-wheels \
    compose build --force-rm >"$CACHE/compose-build.log" 2>&1 \
    || { tail -n 40 "$CACHE/compose-build.log" >&2; exit 1; }
  log "compose build took $((SECONDS - t0)) s"
}

main "$@"
